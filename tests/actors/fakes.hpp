#pragma once

// Fakes used only to inject faults; everything else in these tests is real.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <caf/all.hpp>

#include "actors/actors.hpp"
#include "backends/backend.hpp"
#include "core/errors.hpp"

namespace berth::test {

/// A backend that records its calls; it can fail or hang on demand.
class fake_backend : public backend {
public:
  std::atomic<int> mounts{0}, unmounts{0}, lazy_unmounts{0}, creates{0}, removes{0};
  std::atomic<bool> fail_mount{false}, fail_unmount{false}, hang_unmount{false};
  std::atomic<bool> host_mounted{false};

  std::string name() const override { return "local"; }
  caf::error validate(const std::string&, const option_map& options) const override {
    for (const auto& [k, v] : options) {
      if (k != "type" && k != "device" && k != "o") {
        return make_error(ec::invalid_argument, "unknown option \"" + k + "\"");
      }
    }
    return {};
  }
  caf::error create(const volume_record&) override {
    ++creates;
    return {};
  }
  caf::expected<std::string> mount(const volume_record& rec) override {
    ++mounts;
    if (fail_mount) {
      return make_error(ec::backend_failure, "mount of " + rec.name + " failed: injected");
    }
    host_mounted = true;
    return "/fake/" + rec.name;
  }
  caf::error unmount(const volume_record& rec, bool lazy) override {
    if (lazy) {
      ++lazy_unmounts;
      host_mounted = false;
      return {};
    }
    ++unmounts;
    if (hang_unmount) {
      std::unique_lock<std::mutex> guard{mtx_};
      cv_.wait_for(guard, std::chrono::seconds(10), [this] { return !hang_unmount; });
    }
    if (fail_unmount) {
      return make_error(ec::backend_failure, "unmount of " + rec.name + " failed: injected");
    }
    host_mounted = false;
    return {};
  }
  caf::error remove(const volume_record&) override {
    ++removes;
    return {};
  }
  std::string mountpoint(const volume_record& rec) const override { return "/fake/" + rec.name; }

  void release() {
    hang_unmount = false;
    cv_.notify_all();
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
};

/// What the fake persistence keeps; shared with the test.
struct fake_disk {
  std::mutex mtx;
  std::map<std::string, volume_record> records;
  std::atomic<bool> fail{false};
  std::atomic<int> writes{0};
};

inline persistence_actor::behavior_type fake_persistence(persistence_actor::pointer,
                                                         std::shared_ptr<fake_disk> disk) {
  return {
    [disk](atom::put, volume_record& rec) -> caf::result<atom::ok> {
      if (disk->fail) {
        return make_error(ec::persist_failure, "state directory is gone (injected)");
      }
      ++disk->writes;
      std::lock_guard<std::mutex> guard{disk->mtx};
      disk->records[rec.name] = rec;
      return atom::ok_v;
    },
    [disk](atom::erase, std::string& name) -> caf::result<atom::ok> {
      if (disk->fail) {
        return make_error(ec::persist_failure, "state directory is gone (injected)");
      }
      std::lock_guard<std::mutex> guard{disk->mtx};
      disk->records.erase(name);
      return atom::ok_v;
    },
    [](atom::flush) -> caf::result<atom::ok> { return atom::ok_v; },
    [](atom::commit) {},
  };
}

/// An actor system that knows berth's message types.
struct test_system {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  test_system() {
    cfg.add_message_types<caf::id_block::berth>();
    cfg.set("scheduler.max-threads", 2);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
};

} // namespace berth::test
