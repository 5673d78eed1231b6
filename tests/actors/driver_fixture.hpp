#pragma once

// The volume actor as a driver, under CAF's test coordinator: its messages are delivered
// when the test runs them, its clock moves only when the test moves it, and its backend
// calls run when the test runs them (manual_runner). No thread, no sleep.

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <gtest/gtest.h>

#include "actors/type_ids.hpp"
#include "actors/volume.hpp"
#include "core/errors.hpp"
#include "tests/actors/fakes.hpp"
#include "tests/actors/manual_runner.hpp"
#include "tests/actors/volume_csi_fixture.hpp"

namespace berth::test {

inline caf::actor_system_config& testing_config(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::berth>();
  cfg.set("scheduler.policy", caf::atom("testing"));
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  return cfg;
}

class volume_driver_fixture : public ::testing::Test {
protected:
  static constexpr std::chrono::milliseconds timeout{100};

  caf::actor_system_config cfg;
  caf::actor_system sys{testing_config(cfg)};
  caf::scheduler::test_coordinator& sched =
    dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  caf::scoped_actor self{sys, true};
  std::shared_ptr<fake_backend> storage = std::make_shared<fake_backend>();
  std::shared_ptr<fake_disk> disk = std::make_shared<fake_disk>();
  std::shared_ptr<manual_runner> runner = std::make_shared<manual_runner>();
  /// What the volume counts (its env's stats).
  std::shared_ptr<telemetry> stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  persistence_actor persistence;
  volume_actor vol;
  /// Set before spawn(): changes the volume's env (its coalescing window, say).
  std::function<void(volume_env&)> adjust_env;

  /// Spawns the volume of `rec` (loaded from state when `exists`, reconciled against
  /// the host's mount points `seen` when they are given) and runs what it starts with.
  void spawn(volume_record rec, bool exists,
             std::shared_ptr<const std::set<std::string>> seen = nullptr) {
    persistence = sys.spawn(fake_persistence, disk);
    auto env = env_of(storage, runner, persistence, timeout, std::move(seen));
    env.stats = stats;
    if (adjust_env) {
      adjust_env(env);
    }
    vol = sys.spawn(volume, std::move(env), std::make_shared<const volume_record>(std::move(rec)),
                    exists);
    sched.run();
  }

  /// Spawns the new Docker volume "v1" and creates it.
  void spawn_created() {
    volume_record rec;
    rec.name = "v1";
    spawn(rec, false);
    auto created = ask<atom::ok>(atom::create_v, option_map{}, uint64_t{0});
    ASSERT_TRUE(created.given && !created.err) << describe(created.err);
  }

  /// Spawns the new CSI volume "pvc-1" and creates it (10 MiB).
  void spawn_csi_created() {
    volume_record rec;
    rec.name = "pvc-1";
    spawn(rec, false);
    auto created = ask<volume_record>(atom::create_v, csi_spec(10 * mib));
    ASSERT_TRUE(created.given && !created.err) << describe(created.err);
  }

  void TearDown() override {
    self->send_exit(vol, caf::exit_reason::user_shutdown);
    self->send_exit(persistence, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// A request's answer, once the volume gave it.
  template <class R>
  struct answer {
    bool given = false;
    caf::error err;
    R value{};
  };

  /// Sends `dest` a request and runs every message and every backend call it leads to.
  template <class R, class Dest, class... Ts>
  answer<R> ask_to(const Dest& dest, Ts&&... xs) {
    auto h = start_to(dest, std::forward<Ts>(xs)...);
    run_all_calls();
    return answer_of<R>(h);
  }

  /// Sends `dest` a request and runs the messages, but not the backend call it starts.
  template <class Dest, class... Ts>
  auto start_to(const Dest& dest, Ts&&... xs) {
    auto h = self->request(dest, caf::infinite, std::forward<Ts>(xs)...);
    sched.run();
    return h;
  }

  /// ask_to and start_to, to the volume.
  template <class R, class... Ts>
  answer<R> ask(Ts&&... xs) {
    return ask_to<R>(vol, std::forward<Ts>(xs)...);
  }
  template <class... Ts>
  auto start(Ts&&... xs) {
    return start_to(vol, std::forward<Ts>(xs)...);
  }

  /// The answer to `h`, if the volume gave it. Every other request sent is answered
  /// already (or read): a reply in the mailbox is then this one's.
  template <class R, class Handle>
  answer<R> answer_of(Handle& h) {
    answer<R> out;
    if (!self->has_next_message()) {
      return out;
    }
    out.given = true;
    h.receive([&](R& x) { out.value = std::move(x); }, [&](caf::error& err) { out.err = err; });
    return out;
  }

  answer<std::string> mount(const std::string& id) {
    return ask<std::string>(atom::mount_v, id, std::string{}, caller{});
  }

  volume_record record() { return ask<volume_record>(atom::get_v).value; }

  /// The call held running returns (late, if its deadline passed); its report runs.
  void return_held() {
    runner->finish_running();
    sched.run();
  }

  /// Runs the oldest waiting call and its report; false: none waits.
  bool run_call() {
    bool ran = runner->run_next();
    sched.run();
    return ran;
  }

  /// Runs every waiting call, and each call their reports lead to.
  void run_all_calls() {
    while (run_call()) {
    }
  }

  /// Moves the clock by `d` and runs what became due.
  void advance(std::chrono::milliseconds d) {
    sched.advance_time(d);
    sched.run();
  }
};

} // namespace berth::test
