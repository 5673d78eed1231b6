#pragma once

// Fakes used only to inject faults; everything else in these tests is real.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include "actors/actors.hpp"
#include "actors/volume.hpp"
#include "backends/backend.hpp"
#include "backends/executor.hpp"
#include "core/errors.hpp"
#include "core/telemetry/telemetry.hpp"
#include "tests/actors/fake_backend.hpp"

namespace berth::test {

/// A volume's environment; the coalescing mailbox keeps its defaults.
inline volume_env env_of(std::shared_ptr<backend> storage, std::shared_ptr<task_runner> exec,
                         persistence_actor persistence, std::chrono::milliseconds timeout,
                         std::shared_ptr<const std::set<std::string>> reconcile_with = nullptr) {
  volume_env env;
  env.storage = std::move(storage);
  env.exec = std::move(exec);
  env.persistence = std::move(persistence);
  env.backend_timeout = timeout;
  env.reconcile_with = std::move(reconcile_with);
  env.stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  return env;
}

struct fake_disk {
  std::mutex mtx;
  std::map<std::string, volume_record> records;
  std::atomic<bool> fail{false};
  std::atomic<int> writes{0};
};

/// The record `disk` holds for volume `name` (empty when none).
inline volume_record record_on(fake_disk& disk, const std::string& name) {
  std::lock_guard<std::mutex> guard{disk.mtx};
  auto it = disk.records.find(name);
  return it == disk.records.end() ? volume_record{} : it->second;
}

inline persistence_actor::behavior_type fake_persistence(persistence_actor::pointer,
                                                         std::shared_ptr<fake_disk> disk) {
  return {
    [disk](atom::put, shared_record& rec) -> caf::result<atom::ok> {
      if (disk->fail) {
        return make_error(ec::persist_failure, "state directory is gone (injected)");
      }
      ++disk->writes;
      std::lock_guard<std::mutex> guard{disk->mtx};
      disk->records[rec->name] = *rec;
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
    [](atom::compacted, uint64_t, caf::error&) {},
  };
}

/// Sends one request whose reply has type R to `dest` and waits for it; returns
/// the error (empty on success).
template <class R, class Dest, class... Ts>
caf::error call(caf::scoped_actor& self, const Dest& dest, Ts&&... xs) {
  caf::error result;
  self->request(dest, std::chrono::seconds(5), std::forward<Ts>(xs)...)
    .receive([](R&) {}, [&](caf::error& err) { result = err; });
  return result;
}

/// Like call, but returns the reply itself.
template <class R, class Dest, class... Ts>
caf::expected<R> ask(caf::scoped_actor& self, const Dest& dest, Ts&&... xs) {
  caf::expected<R> result{R{}};
  self->request(dest, std::chrono::seconds(5), std::forward<Ts>(xs)...)
    .receive([&](R& out) { result = std::move(out); }, [&](caf::error& err) { result = err; });
  return result;
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

/// What the volume tests share: one volume actor on the fake backend and the
/// fake persistence, stopped (with the executor) after each test.
class volume_fixture : public ::testing::Test {
protected:
  test_system ts;
  std::shared_ptr<fake_backend> storage = std::make_shared<fake_backend>();
  std::shared_ptr<fake_disk> disk = std::make_shared<fake_disk>();
  std::shared_ptr<executor> exec = std::make_shared<executor>(4, 64);
  caf::scoped_actor self{*ts.sys};
  volume_actor vol;
  /// What the volume counts (its env's stats).
  std::shared_ptr<telemetry> stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});

  std::string volume_name; ///< the volume spawn_volume made

  /// Spawns the volume `name` with this backend timeout; `adjust` may change the
  /// rest of its environment (the coalescing window, say).
  void spawn_volume(const std::string& name, std::chrono::milliseconds backend_timeout,
                    const std::function<void(volume_env&)>& adjust = {}) {
    auto persistence = ts.sys->spawn(fake_persistence, disk);
    auto env = env_of(storage, exec, persistence, backend_timeout);
    env.stats = stats;
    if (adjust) {
      adjust(env);
    }
    volume_record rec;
    rec.name = name;
    volume_name = name;
    vol = ts.sys->spawn(volume, env, std::make_shared<const volume_record>(rec), false);
  }

  /// The volume's committed record, as the actor answers it.
  volume_record get() {
    auto rec = ask<volume_record>(self, vol, atom::get_v);
    EXPECT_TRUE(rec) << describe(rec.error());
    return rec ? *rec : volume_record{};
  }

  /// The volume's record as the fake persistence holds it (empty when none).
  volume_record on_disk() { return record_on(*disk, volume_name); }

  void TearDown() override {
    storage->release();
    self->send_exit(vol, caf::exit_reason::user_shutdown);
    exec->stop();
  }
};

} // namespace berth::test
