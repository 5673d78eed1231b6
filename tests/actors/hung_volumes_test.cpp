// A hung call blocks only its own volume (docs/design.md), through the executor:
// volumes whose backend calls hang, and whose callers keep retrying, must not hold the
// other volumes up, and a hung volume never has two backend calls in flight. The calls
// hang until the test ends, so "not held up" is exact: every healthy pair completes while
// each hung call is still hung. How much they slow the others is a figure, not a test:
// berth-bench's --stalled run (docs/benchmarks.md).

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "actors/volume.hpp"
#include "backends/stall_backend.hpp"
#include "core/errors.hpp"
#include "tests/actors/fakes.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> stalled = {"stuck0", "stuck1", "stuck2"};
const std::vector<std::string> healthy = {"ok0", "ok1", "ok2", "ok3"};

class hung_volumes_test : public ::testing::Test {
protected:
  test::test_system ts;
  std::shared_ptr<test::fake_backend> fake = std::make_shared<test::fake_backend>();
  std::shared_ptr<stall_backend> storage;
  std::shared_ptr<executor> exec = std::make_shared<executor>(2, 4096);
  std::shared_ptr<test::fake_disk> disk = std::make_shared<test::fake_disk>();
  std::map<std::string, volume_actor> vols;

  void SetUp() override {
    fake->call_ms = 3;
    // stall_backend owns its inner backend: a forwarding shell lets the test keep the fake.
    storage = std::make_shared<stall_backend>(std::make_unique<forward_to>(fake),
                                              std::set<std::string>(stalled.begin(),
                                                                    stalled.end()),
                                              std::chrono::minutes{10}); // until TearDown
    auto persistence = ts.sys->spawn(test::fake_persistence, disk);
    for (const auto& name : stalled) {
      spawn(name, persistence);
    }
    for (const auto& name : healthy) {
      spawn(name, persistence);
    }
  }

  void TearDown() override {
    storage->release();
    // Each volume answers once its hung call returned and settled: then none is left.
    caf::scoped_actor self{*ts.sys};
    for (auto& [name, v] : vols) {
      EXPECT_FALSE(test::call<atom::ok>(self, v, atom::settled_v)) << name << " settles";
    }
    for (auto& [name, v] : vols) {
      caf::anon_send_exit(v, caf::exit_reason::user_shutdown);
    }
    exec->stop(10s);
    EXPECT_EQ(exec->hung_workers(), 0u) << "every hung call returned once released";
  }

  /// Mount+Unmount pairs on every healthy volume at once; the pairs' p99 in ms.
  double healthy_p99(int pairs_each) {
    std::vector<std::thread> clients;
    std::mutex mtx;
    std::vector<double> lat;
    std::atomic<int> failures{0};
    for (const auto& name : healthy) {
      clients.emplace_back([&, name] {
        caf::scoped_actor self{*ts.sys};
        for (int i = 0; i < pairs_each; ++i) {
          auto start = std::chrono::steady_clock::now();
          auto m = test::call<std::string>(self, vols[name], atom::mount_v,
                                           std::string{"c"}, std::string{}, caller{});
          auto u = test::call<atom::ok>(self, vols[name], atom::unmount_v, std::string{"c"});
          auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now()
                                                              - start).count();
          if (m || u) {
            ++failures;
          }
          std::lock_guard<std::mutex> lock(mtx);
          lat.push_back(ms);
        }
      });
    }
    for (auto& c : clients) {
      c.join();
    }
    EXPECT_EQ(failures, 0) << "healthy volumes must keep working";
    std::sort(lat.begin(), lat.end());
    return lat[static_cast<size_t>(0.99 * static_cast<double>(lat.size() - 1))];
  }

private:
  /// Hands every call to the shared fake.
  struct forward_to : backend {
    std::shared_ptr<test::fake_backend> inner;
    explicit forward_to(std::shared_ptr<test::fake_backend> b) : inner(std::move(b)) {}
    std::string name() const override { return inner->name(); }
    caf::error validate(const std::string& v, const option_map& o) const override {
      return inner->validate(v, o);
    }
    caf::error create(const volume_record& r) override { return inner->create(r); }
    caf::expected<std::string> mount(const volume_record& r) override { return inner->mount(r); }
    caf::error unmount(const volume_record& r, bool lazy) override {
      return inner->unmount(r, lazy);
    }
    caf::error remove(const volume_record& r) override { return inner->remove(r); }
    std::string mountpoint(const volume_record& r) const override { return inner->mountpoint(r); }
  };

  void spawn(const std::string& name, const persistence_actor& persistence) {
    auto env = test::env_of(storage, exec, persistence, 100ms);
    volume_record rec;
    rec.name = name;
    vols[name] = ts.sys->spawn(volume, env, std::make_shared<const volume_record>(rec), true);
  }
};

} // namespace

TEST_F(hung_volumes_test, retries_on_hung_volumes_do_not_hold_the_others_up) {
  auto baseline = healthy_p99(40);
  // Callers of the stalled volumes retry as fast as they are answered, as dockerd
  // and kubelet do. Each volume's first call hangs and times out; from then on the
  // volume refuses at once (ec::aborted) rather than start a second call.
  std::atomic<bool> stop{false};
  std::atomic<int> retries{0};
  std::mutex mtx;
  std::condition_variable cv;
  size_t seen_hung = 0; // retriers whose volume refused them twice
  std::vector<std::thread> retriers;
  for (const auto& name : stalled) {
    retriers.emplace_back([&, name] {
      caf::scoped_actor self{*ts.sys};
      int refused = 0;
      while (!stop) {
        auto err = test::call<std::string>(self, vols[name], atom::mount_v, std::string{"r"},
                                           std::string{}, caller{});
        ++retries;
        if (err == ec::aborted && ++refused == 2) {
          std::lock_guard<std::mutex> lock(mtx);
          ++seen_hung;
          cv.notify_all();
        }
      }
    });
  }
  auto stop_retriers = [&] {
    stop = true;
    for (auto& r : retriers) {
      r.join();
    }
  };
  {
    // Every stalled volume has its call hung, and its caller was answered (timed out)
    // and came back at least twice.
    std::unique_lock<std::mutex> lock(mtx);
    if (!cv.wait_for(lock, 60s, [&] { return seen_hung == stalled.size(); })) {
      lock.unlock();
      stop_retriers();
      FAIL() << "the stalled volumes did not all hang and refuse their retries";
    }
  }
  EXPECT_EQ(exec->hung_workers(), stalled.size()) << "the stalled volumes' calls hang";
  auto with_hung = healthy_p99(40);
  EXPECT_EQ(exec->hung_workers(), stalled.size())
    << "every healthy pair completed while the stalled calls were still hung";
  stop_retriers();
  std::printf("healthy Mount+Unmount p99: %.2f ms alone, %.2f ms while %zu volumes hang "
              "(%d retries on them)\n",
              baseline, with_hung, stalled.size(), retries.load());
  EXPECT_GT(retries, 9) << "the stalled volumes must have been retried";
  for (const auto& name : stalled) {
    EXPECT_EQ(storage->max_in_flight(name), 1) << name << " must never have two calls in flight";
  }
  EXPECT_EQ(exec->hung_workers(), stalled.size()) << "one hung thread per hung volume";
}
