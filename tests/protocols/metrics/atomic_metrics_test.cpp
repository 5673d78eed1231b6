#include "core/telemetry/atomic_metrics.hpp"

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/metrics/exposition.hpp"
#include "tests/protocols/metrics/refusal.hpp"

using namespace berth::metrics;

namespace {

constexpr int threads = 4;
constexpr int rounds = 200000;

static_assert(alignof(atomic_counter) == 64, "hot counters must not share a cache line");

/// Runs `body(thread_index)` on `threads` threads that start together.
template <class F>
void on_threads(F body) {
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (!go.load()) {
        std::this_thread::yield();
      }
      body(t);
    });
  }
  go = true;
  for (auto& th : pool) {
    th.join();
  }
}

} // namespace

TEST(atomic_counter, adds_from_several_threads_sum_exactly) {
  atomic_counter c;
  EXPECT_EQ(c.value(), 0u);
  on_threads([&](int) {
    for (int i = 0; i < rounds; ++i) {
      c.add();
      c.add(3);
    }
  });
  EXPECT_EQ(c.value(), uint64_t{threads} * rounds * 4);
}

TEST(atomic_histogram, an_observation_goes_to_the_first_bucket_whose_bound_holds_it) {
  atomic_histogram h{{0.1, 1, 10}};
  h.observe(0.05); // le 0.1
  h.observe(0.1);  // le 0.1: bounds are inclusive
  h.observe(0.5);  // le 1
  h.observe(10);   // le 10
  h.observe(11);   // +Inf only
  h.observe(-3);   // le 0.1
  auto snap = h.snapshot();
  EXPECT_EQ(snap.upper_bounds, (std::vector<double>{0.1, 1, 10}));
  EXPECT_EQ(snap.cumulative_counts, (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(snap.count, 6u);
  EXPECT_DOUBLE_EQ(snap.sum, 0.05 + 0.1 + 0.5 + 10 + 11 - 3);
}

TEST(atomic_histogram, nan_counts_in_the_inf_bucket_and_makes_the_sum_nan) {
  atomic_histogram h{{1}};
  h.observe(std::numeric_limits<double>::quiet_NaN());
  auto snap = h.snapshot();
  EXPECT_EQ(snap.cumulative_counts, (std::vector<uint64_t>{0}));
  EXPECT_EQ(snap.count, 1u);
  EXPECT_TRUE(std::isnan(snap.sum));
}

TEST(atomic_histogram, an_empty_one_snapshots_to_zeros) {
  atomic_histogram h{{0.001, 0.01}};
  auto snap = h.snapshot();
  EXPECT_EQ(snap.cumulative_counts, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(snap.count, 0u);
  EXPECT_EQ(snap.sum, 0);
}

TEST(atomic_histogram, observations_from_several_threads_sum_exactly) {
  atomic_histogram h{{0.25, 1, 4}};
  // Binary fractions and small integers: every partial sum is exact in a double, so
  // the sum must come out exactly, whatever the interleaving.
  const double values[] = {0.125, 0.25, 0.5, 1, 2, 4, 8};
  on_threads([&](int) {
    for (int i = 0; i < rounds; ++i) {
      h.observe(values[i % 7]);
    }
  });
  auto snap = h.snapshot();
  uint64_t each[7] = {}; // how often each value was observed (rounds is no multiple of 7)
  for (int i = 0; i < rounds; ++i) {
    ++each[i % 7];
  }
  double expected_sum = 0;
  for (int k = 0; k < 7; ++k) {
    each[k] *= threads;
    expected_sum += values[k] * static_cast<double>(each[k]);
  }
  EXPECT_EQ(snap.cumulative_counts,
            (std::vector<uint64_t>{each[0] + each[1], each[0] + each[1] + each[2] + each[3],
                                   each[0] + each[1] + each[2] + each[3] + each[4] + each[5]}));
  EXPECT_EQ(snap.count, uint64_t{threads} * rounds);
  EXPECT_EQ(snap.sum, expected_sum);
}

TEST(atomic_histogram, a_snapshot_taken_during_observations_always_renders) {
  atomic_histogram h{{0.001, 0.01, 0.1, 1}};
  std::atomic<bool> stop{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads - 1; ++t) {
    pool.emplace_back([&, t] {
      double v = 0.0005 * (t + 1);
      while (!stop.load(std::memory_order_relaxed)) {
        h.observe(v);
        v = v > 2 ? 0.0005 : v * 3;
      }
    });
  }
  uint64_t last_count = 0;
  for (int i = 0; i < 2000; ++i) {
    auto snap = h.snapshot();
    EXPECT_GE(snap.count, last_count);
    last_count = snap.count;
    auto out = render({family{"op_duration_seconds", "Latency.", metric_type::histogram, {},
                              {{{}, std::move(snap)}}}});
    ASSERT_TRUE(out) << berth::describe(out.error());
  }
  stop = true;
  for (auto& th : pool) {
    th.join();
  }
  EXPECT_GT(h.snapshot().count, 0u);
}

TEST(atomic_histogram, bad_bounds_make_the_writer_refuse_its_family_by_name) {
  atomic_histogram h{{1, 0.5}};
  h.observe(0.7);
  auto msg = test::refusal(
    {family{"op_duration_seconds", "Latency.", metric_type::histogram, {}, {{{}, h.snapshot()}}}});
  EXPECT_NE(msg.find("histogram op_duration_seconds"), std::string::npos) << msg;
  EXPECT_NE(msg.find("strictly increasing"), std::string::npos) << msg;
}

TEST(atomic_histogram, a_counter_snapshot_renders_as_an_integer) {
  atomic_counter c;
  c.add(1234567);
  auto out = render({family{"berth_journal_appends_total", "Records appended.",
                            metric_type::counter, {{{}, static_cast<double>(c.value())}}, {}}});
  ASSERT_TRUE(out);
  EXPECT_NE(out->find("\nberth_journal_appends_total 1234567\n"), std::string::npos) << *out;
}
