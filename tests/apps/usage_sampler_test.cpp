// The usage sampler (apps/berthd/usage_sampler.cpp): which records it measures (one
// statvfs per mounted block volume, never a directory), its series bound, and that a
// failed list keeps the last sample.

#include "apps/berthd/usage_sampler.hpp"

#include <atomic>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/backends/temp_state.hpp"

namespace berth {
namespace {

volume_record docker_block(const std::string& name, bool mounted, uint64_t capacity = 64 << 20) {
  volume_record rec;
  rec.name = name;
  rec.backend = "block";
  rec.owner = record_owner::docker;
  rec.capacity_bytes = capacity;
  rec.mounted = mounted;
  rec.mountpoint = mounted ? "/block/mounts/" + name : "";
  return rec;
}

TEST(usage_sampler, measures_mounted_block_volumes_only) {
  auto dir = docker_block("d", false);
  dir.backend = "local";
  dir.mounted = true;
  dir.mountpoint = "/state/volumes/d/data";
  auto staged = docker_block("c", false);
  staged.staging_path = "/kubelet/staging/c";
  auto raw = docker_block("r", false);
  raw.staging_path = "/kubelet/staging/r";
  raw.staged_block = true;
  auto snap = docker_block("s", true);
  snap.kind = record_kind::snapshot;
  EXPECT_EQ(measured_path(docker_block("m", true)), "/block/mounts/m");
  EXPECT_EQ(measured_path(docker_block("u", false)), "") << "not mounted";
  EXPECT_EQ(measured_path(dir), "") << "a directory volume would need a tree walk";
  EXPECT_EQ(measured_path(staged), "/kubelet/staging/c");
  EXPECT_EQ(measured_path(raw), "") << "raw block: no filesystem of berth's";
  EXPECT_EQ(measured_path(snap), "");

  auto stats = std::make_shared<telemetry>(std::vector<std::string>{"block"});
  std::atomic<int> calls{0};
  usage_sampler sampler{
    [&]() -> caf::expected<std::vector<volume_record>> {
      return std::vector<volume_record>{docker_block("a", true), dir, staged,
                                        docker_block("u", false)};
    },
    stats, 1000, std::chrono::seconds(60),
    [&](const std::string& path) -> caf::expected<uint64_t> {
      ++calls;
      return path.size() * 1000; // a figure per path, to tell them apart
    }};
  sampler.sample_once();
  EXPECT_EQ(calls, 2) << "one statvfs per mounted block volume, none for the others";
  auto table = stats->usage.snapshot();
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table["a"].used_bytes, std::string{"/block/mounts/a"}.size() * 1000);
  EXPECT_EQ(table["a"].limit_bytes, uint64_t{64} << 20);
  EXPECT_EQ(table.count("c"), 1u);
  EXPECT_FALSE(stats->usage.of("d")) << "a directory volume has no figure";
}

TEST(usage_sampler, exports_at_most_its_bound_and_counts_the_rest) {
  auto stats = std::make_shared<telemetry>(std::vector<std::string>{"block"});
  std::atomic<int> calls{0};
  bool fail_list = false;
  usage_sampler sampler{
    [&]() -> caf::expected<std::vector<volume_record>> {
      if (fail_list) {
        return make_error(ec::timeout, "the registry did not answer");
      }
      return std::vector<volume_record>{docker_block("a", true), docker_block("b", true),
                                        docker_block("c", true)};
    },
    stats, 2, std::chrono::seconds(60),
    [&](const std::string&) -> caf::expected<uint64_t> {
      ++calls;
      return uint64_t{4096};
    }};
  sampler.sample_once();
  EXPECT_EQ(calls, 2) << "the volumes beyond the bound are not measured";
  auto table = stats->usage.snapshot();
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.count("c"), 0u) << "the first by name are kept";
  EXPECT_EQ(stats->usage.omitted(), 1u);
  fail_list = true;
  sampler.sample_once();
  EXPECT_EQ(stats->usage.snapshot().size(), 2u) << "a failed list keeps the last sample";
}

TEST(usage_sampler, reads_a_real_filesystem_and_stops_promptly) {
  test::temp_state dir;
  auto used = used_bytes_at(dir.path());
  ASSERT_TRUE(used) << describe(used.error());
  EXPECT_GT(*used, 0u);
  EXPECT_FALSE(used_bytes_at(dir.path() + "/missing"));
  auto stats = std::make_shared<telemetry>(std::vector<std::string>{"block"});
  std::atomic<int> lists{0};
  auto rec = docker_block("a", true);
  rec.mountpoint = dir.path();
  usage_sampler sampler{[&]() -> caf::expected<std::vector<volume_record>> {
                          ++lists;
                          return std::vector<volume_record>{rec};
                        },
                        stats, 10, std::chrono::seconds(3600)};
  auto started = std::chrono::steady_clock::now();
  sampler.start();
  for (int i = 0; i < 200 && lists == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  sampler.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5))
    << "stop does not wait out the interval";
  EXPECT_EQ(lists, 1) << "a sample at start";
  ASSERT_TRUE(stats->usage.of("a"));
  EXPECT_GT(stats->usage.of("a")->used_bytes, 0u);
}

} // namespace
} // namespace berth
