#include "backends/executor.hpp"

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

using namespace std::chrono_literals;

namespace berth {
namespace {

TEST(executor, runs_tasks_on_worker_threads) {
  executor ex(3, 100);
  std::mutex mtx;
  std::set<std::thread::id> ids;
  std::atomic<int> done{0};
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(ex.submit([&] {
      std::this_thread::sleep_for(2ms);
      std::lock_guard<std::mutex> lock(mtx);
      ids.insert(std::this_thread::get_id());
      ++done;
    }));
  }
  ex.stop();
  EXPECT_EQ(done.load(), 30); // stop() lets queued tasks run
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 0u);
  EXPECT_GE(ids.size(), 2u);
}

TEST(executor, bounded_queue_refuses_when_full) {
  executor ex(1, 2);
  std::promise<void> release;
  auto gate = release.get_future().share();
  std::promise<void> started;
  ASSERT_TRUE(ex.submit([&, gate] {
    started.set_value();
    gate.wait();
  }));
  started.get_future().wait(); // the worker holds task 1; the queue is empty
  EXPECT_TRUE(ex.submit([] {}));
  EXPECT_TRUE(ex.submit([] {}));
  EXPECT_FALSE(ex.submit([] {})) << "a third queued task must be refused";
  release.set_value();
  ex.stop();
  EXPECT_FALSE(ex.submit([] {})) << "a stopped executor takes nothing";
}

TEST(executor, throwing_task_does_not_kill_the_worker) {
  executor ex(1, 10);
  std::promise<int> result;
  ASSERT_TRUE(ex.submit([] { throw std::runtime_error("boom"); }));
  ASSERT_TRUE(ex.submit([] { throw 42; }));
  ASSERT_TRUE(ex.submit([&] { result.set_value(7); }));
  auto f = result.get_future();
  ASSERT_EQ(f.wait_for(2s), std::future_status::ready);
  EXPECT_EQ(f.get(), 7);
}

TEST(executor, hung_task_does_not_block_others) {
  executor ex(2, 10);
  std::promise<void> release;
  auto gate = release.get_future().share();
  ASSERT_TRUE(ex.submit([gate] { gate.wait_for(10s); }));
  std::promise<void> other;
  ASSERT_TRUE(ex.submit([&] { other.set_value(); }));
  // The hung task returns only once released: the other one ran beside it. (The bound
  // only keeps a broken executor from hanging the suite.)
  EXPECT_EQ(other.get_future().wait_for(30s), std::future_status::ready);
  release.set_value();
}

TEST(executor, stop_returns_with_a_hung_task) {
  auto ex = std::make_unique<executor>(2, 10);
  std::atomic<bool> ran{false};
  // The hung task returns only when the test opens its gate, so every stop below
  // returns while it still runs; it keeps only what it captures by value alive.
  std::promise<void> open;
  auto gate = open.get_future().share();
  auto returned = std::make_shared<std::atomic<bool>>(false);
  ASSERT_TRUE(ex->submit([gate, returned] {
    gate.wait();
    *returned = true;
  }));
  ASSERT_TRUE(ex->submit([&ran] { ran = true; }));
  auto start = std::chrono::steady_clock::now();
  ex->stop(300ms);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(ran.load()) << "stop() lets the other worker finish its task";
  EXPECT_FALSE(returned->load()) << "stop() returned while the hung task runs";
  EXPECT_GE(took, 300ms) << "stop() waits its grace for the hung worker";
  // Idempotent, and it does not wait for the detached worker again: with a grace of an
  // hour, waiting would hang the test.
  ex->stop(std::chrono::hours(1));
  EXPECT_FALSE(returned->load());
  ex.reset(); // destroying with a detached worker must be safe
  open.set_value();
}

TEST(executor, an_abandoned_task_that_has_not_started_never_runs) {
  executor ex(1, 10);
  std::promise<void> release;
  auto gate = release.get_future().share();
  ASSERT_TRUE(ex.submit([gate] { gate.wait_for(10s); }));
  std::atomic<bool> ran{false};
  auto queued = ex.submit([&ran] { ran = true; });
  ASSERT_TRUE(queued);
  EXPECT_EQ(ex.abandon(queued), executor::abandoned::dropped);
  release.set_value();
  ex.stop();
  EXPECT_FALSE(ran.load()) << "a task whose caller gave up before it started must not run";
}

TEST(executor, hung_tasks_never_take_every_worker) {
  // Two workers, three hung tasks abandoned in turn: each abandon of a running task
  // adds a spare worker, so a fresh task still runs at once (docs/design.md, "A hung
  // call blocks only its own volume").
  executor ex(2, 10);
  std::promise<void> release;
  auto gate = release.get_future().share();
  for (int i = 0; i < 3; ++i) {
    auto started = std::make_shared<std::promise<void>>();
    auto hung = ex.submit([gate, started] {
      started->set_value();
      gate.wait();
    });
    ASSERT_TRUE(hung);
    ASSERT_EQ(started->get_future().wait_for(30s), std::future_status::ready)
      << "hung task " << i << " must get a worker";
    EXPECT_EQ(ex.abandon(hung), executor::abandoned::running);
  }
  EXPECT_EQ(ex.hung_workers(), 3u);
  std::promise<void> other;
  ASSERT_TRUE(ex.submit([&] { other.set_value(); }));
  // The hung tasks return only once released: this one ran beside them. (The bound
  // only keeps a broken executor from hanging the suite.)
  EXPECT_EQ(other.get_future().wait_for(30s), std::future_status::ready)
    << "a task must not wait behind hung ones";
  release.set_value();
  // A released worker retires on its own; wait for the count itself, not for a time.
  for (int j = 0; j < 30000 && ex.hung_workers() > 0; ++j) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(ex.hung_workers(), 0u) << "a hung worker that returns retires";
  ex.stop();
}

TEST(executor, abandoning_a_finished_task_changes_nothing) {
  executor ex(1, 10);
  std::promise<void> done;
  auto t = ex.submit([&] { done.set_value(); });
  ASSERT_TRUE(t);
  done.get_future().wait();
  // One worker: it marks the first task finished before it runs the next one.
  std::promise<void> next;
  ASSERT_TRUE(ex.submit([&] { next.set_value(); }));
  next.get_future().wait();
  EXPECT_EQ(ex.abandon(t), executor::abandoned::finished);
  EXPECT_EQ(ex.hung_workers(), 0u);
}

} // namespace
} // namespace berth
