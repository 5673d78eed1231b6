#include "core/telemetry/tables.hpp"

#include <thread>

#include <gtest/gtest.h>

namespace berth {
namespace {

TEST(CounterTable, CountsEachKeyApartAndUnknownOnesUnderOther) {
  counter_table t{{"b", "a", "b"}};
  t.add("a");
  t.add("b", 3);
  t.add("zzz", 2);
  EXPECT_EQ(t.value("a"), 1u);
  EXPECT_EQ(t.value("b"), 3u);
  EXPECT_EQ(t.value(other_label), 2u);
  using row = std::pair<std::string, uint64_t>;
  EXPECT_EQ(t.snapshot(), (std::vector<row>{{"a", 1}, {"b", 3}, {"other", 2}}));
}

TEST(CounterTable, SnapshotListsZeros) {
  counter_table t{{"x"}};
  using row = std::pair<std::string, uint64_t>;
  EXPECT_EQ(t.snapshot(), (std::vector<row>{{"other", 0}, {"x", 0}}));
}

TEST(CounterTable, ConcurrentAddsAreNotLost) {
  counter_table t{{"hot"}};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&t] {
      for (int n = 0; n < 100000; ++n) {
        t.add("hot");
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  EXPECT_EQ(t.value("hot"), 400000u);
}

TEST(HistogramTable, FindsRowsAndFallsBackToOther) {
  histogram_table t{{{"block", "stage"}, {"local", "mount"}}, {1.0}};
  t.at("block", "stage").observe(0.5);
  t.at("block", "nonsense").observe(0.5);
  t.at("nobody", "stage").observe(2);
  auto row = [&t](const char* a, const char* b) {
    return t.row(t.index_of(a, b)).snapshot().count;
  };
  EXPECT_EQ(row("block", "stage"), 1u);
  EXPECT_EQ(row("block", other_label), 1u);
  EXPECT_EQ(row(other_label, other_label), 1u);
  EXPECT_EQ(row("local", "mount"), 0u);
  // Each first value gets its own "other" row, and one row catches everything else.
  std::vector<label_pair> keys{{"block", "other"}, {"block", "stage"}, {"local", "mount"},
                               {"local", "other"}, {"other", "other"}};
  EXPECT_EQ(t.keys(), keys);
}

TEST(AtomicGauge, GoesUpAndDown) {
  atomic_gauge g;
  g.add(5);
  g.add(-7);
  EXPECT_EQ(g.value(), -2);
  g.set(3);
  EXPECT_EQ(g.value(), 3);
}

} // namespace
} // namespace berth
