#include "core/telemetry/telemetry.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include <caf/sec.hpp>

#include "core/errors.hpp"

namespace berth {
namespace {

TEST(CodeOf, NamesOkBerthCodesAndOthers) {
  EXPECT_EQ(code_of(caf::error{}), "ok");
  EXPECT_EQ(code_of(make_error(ec::not_found, "x")), "not_found");
  EXPECT_EQ(code_of(make_error(ec::resource_exhausted, "x")), "resource_exhausted");
  EXPECT_EQ(code_of(caf::make_error(caf::sec::request_timeout)), other_label);
  for (auto name : {"ok", "other", "invalid_argument", "resource_exhausted"}) {
    EXPECT_NE(std::find(code_names().begin(), code_names().end(), name), code_names().end())
      << name;
  }
}

TEST(OperationTable, CountsCodesAndLatencyPerOperation) {
  operation_table ops;
  ops.record("docker", "mount", "ok", 0.002);
  ops.record("docker", "mount", "timeout", 0.5);
  ops.record("csi", "NodeStageVolume", "ok", 0.01);
  ops.record("docker", "VolumeDriver.Bogus", "invalid_argument", 0.001);
  auto rows = ops.snapshot();
  auto find = [&rows](const char* p, const char* o) {
    auto it = std::find_if(rows.begin(), rows.end(),
                           [&](const auto& r) { return r.key == label_pair{p, o}; });
    EXPECT_NE(it, rows.end()) << p << " " << o;
    return *it;
  };
  auto count = [](const operation_table::row& r, const char* code) {
    for (const auto& [c, n] : r.codes) {
      if (c == code) {
        return n;
      }
    }
    return uint64_t{999};
  };
  auto mount = find("docker", "mount");
  EXPECT_EQ(count(mount, "ok"), 1u);
  EXPECT_EQ(count(mount, "timeout"), 1u);
  EXPECT_EQ(count(mount, "not_found"), 0u);
  EXPECT_EQ(mount.duration.count, 2u);
  EXPECT_DOUBLE_EQ(mount.duration.sum, 0.502);
  EXPECT_EQ(find("csi", "NodeStageVolume").duration.count, 1u);
  EXPECT_EQ(count(find("docker", "other"), "invalid_argument"), 1u);
  EXPECT_EQ(find("admin", "status").duration.count, 0u);
}

volume_record record(const char* backend) {
  volume_record rec;
  rec.name = "v";
  rec.backend = backend;
  return rec;
}

int64_t volumes(const volume_gauges& g, const char* backend, const char* kind,
                const char* state) {
  for (const auto& r : g.snapshot()) {
    if (r.backend == backend && r.kind == kind && r.state == state) {
      return r.volumes;
    }
  }
  return -999;
}

TEST(VolumeGauges, FollowARecordThroughItsLife) {
  volume_gauges g{{"local", "block"}};
  auto rec = record("block");
  g.replace(nullptr, &rec);
  EXPECT_EQ(volumes(g, "block", "volume", "idle"), 1);

  auto staged = rec;
  staged.staging_path = "/var/lib/kubelet/staging/v";
  g.replace(&rec, &staged);
  auto published = staged;
  published.published["/t1"] = publication{};
  published.published["/t2"] = publication{};
  g.replace(&staged, &published);
  EXPECT_EQ(volumes(g, "block", "volume", "idle"), 0);
  EXPECT_EQ(volumes(g, "block", "volume", "staged"), 0);
  EXPECT_EQ(volumes(g, "block", "volume", "published"), 1);
  EXPECT_EQ(g.csi_staged.value(), 1);
  EXPECT_EQ(g.csi_published.value(), 2);

  g.replace(&published, nullptr);
  EXPECT_EQ(volumes(g, "block", "volume", "published"), 0);
  EXPECT_EQ(g.csi_staged.value(), 0);
  EXPECT_EQ(g.csi_published.value(), 0);
}

TEST(VolumeGauges, CountMountIdsAndPlaceUnknownBackendsUnderOther) {
  volume_gauges g{{"local"}};
  auto rec = record("nfs-someday");
  rec.mounts["id1"] = 1;
  rec.mounts["id2"] = 3;
  g.replace(nullptr, &rec);
  EXPECT_EQ(g.mount_ids.value(), 2);
  EXPECT_EQ(volumes(g, "other", "volume", "mounted"), 1);
  auto snap = record("local");
  snap.kind = record_kind::snapshot;
  g.replace(nullptr, &snap);
  EXPECT_EQ(volumes(g, "local", "snapshot", "idle"), 1);
}

TEST(Telemetry, BuildsEveryTableFromTheBackendNames) {
  telemetry t{{"local", "block"}};
  t.modify_requests.add(modify_result::applied);
  EXPECT_EQ(t.modify_requests.value(modify_result::applied), 1u);
  t.backends.call_duration.at("block", "stage").observe(0.1);
  EXPECT_EQ(t.backends.call_duration.row(t.backends.call_duration.index_of("block", "stage"))
              .snapshot()
              .count,
            1u);
  t.backends.timeouts.add("local");
  EXPECT_EQ(t.backends.timeouts.value("local"), 1u);
  EXPECT_FALSE(t.ready.state_loaded.load());
}

TEST(Readiness, NamesWhatIsMissingUntilEverythingIsDone) {
  telemetry t{{"local"}};
  EXPECT_EQ(not_ready_reason(t), "the state is loading");
  t.ready.state_loaded = true;
  t.volumes.reconcile_pending.set(3);
  EXPECT_EQ(not_ready_reason(t), "3 volume(s) still reconciling with the host");
  t.volumes.reconcile_pending.set(0);
  EXPECT_EQ(not_ready_reason(t), "the sockets are not accepting yet");
  t.ready.serving = true;
  EXPECT_EQ(not_ready_reason(t), "");
  t.ready.stopping = true;
  EXPECT_EQ(not_ready_reason(t), "berthd is stopping");
}

} // namespace
} // namespace berth
