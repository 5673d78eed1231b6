// What the volume actors count into telemetry (core/telemetry/telemetry.hpp): after a mixed
// Docker and CSI workload through the registry, every volume gauge equals a recount over
// the records the registry lists; a loaded volume counts as reconcile_pending until its
// first reconciliation ends; backend calls are timed under their call names. A hung
// reconciliation's counts are in volume_reconcile_test.cpp, driven by the test.

#include <map>
#include <set>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "actors/registry.hpp"
#include "core/errors.hpp"
#include "core/telemetry/telemetry.hpp"
#include "tests/actors/registry_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

/// The gauges as a recount over `records` would set them.
struct recount {
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> volumes;
  int64_t mount_ids = 0, csi_staged = 0, csi_published = 0;

  explicit recount(const std::vector<volume_record>& records) {
    for (const auto& rec : records) {
      ++volumes[{rec.backend, to_string(rec.kind), volume_state_of(rec)}];
      mount_ids += static_cast<int64_t>(rec.mounts.size());
      csi_staged += rec.staging_path.empty() ? 0 : 1;
      csi_published += static_cast<int64_t>(rec.published.size());
    }
  }
};

class volume_telemetry_test : public test::registry_test {
protected:
  volume_telemetry_test() {
    stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  }

  /// Starts the registry on `initial`; with `mounts`, loaded volumes reconcile.
  void start(std::vector<volume_record> initial = {},
             std::shared_ptr<const std::set<std::string>> mounts = nullptr) {
    host_mounts = std::move(mounts);
    registry_test::start(std::move(initial), 2s);
  }

  /// Every gauge equals the recount of what the registry lists.
  void expect_gauges_match_records() {
    auto records = list();
    recount want{records};
    for (const auto& row : stats->volumes.snapshot()) {
      auto it = want.volumes.find({row.backend, row.kind, row.state});
      int64_t expected = it == want.volumes.end() ? 0 : it->second;
      EXPECT_EQ(row.volumes, expected)
        << "berth_volumes{backend=" << row.backend << ",kind=" << row.kind
        << ",state=" << row.state << "}";
    }
    EXPECT_EQ(stats->volumes.mount_ids.value(), want.mount_ids);
    EXPECT_EQ(stats->volumes.csi_staged.value(), want.csi_staged);
    EXPECT_EQ(stats->volumes.csi_published.value(), want.csi_published);
    EXPECT_EQ(stats->volumes.uncertain.value(), 0);
    EXPECT_EQ(stats->volumes.reconcile_pending.value(), 0);
  }

  template <class R, class... Ts>
  void ok(Ts&&... xs) {
    auto err = test::call<R>(self, reg, std::forward<Ts>(xs)...);
    EXPECT_FALSE(err) << describe(err);
  }

  static volume_spec csi_spec(record_kind kind = record_kind::volume,
                              std::string source = "") {
    volume_spec spec;
    spec.kind = kind;
    spec.backend = "local";
    spec.required_bytes = 8 * test::fake_backend::mib;
    if (!source.empty()) {
      spec.source = content_source{record_kind::volume, std::move(source)};
    }
    return spec;
  }
  static stage_request stage_at(std::string path) {
    stage_request req;
    req.staging_path = std::move(path);
    return req;
  }
  static publish_request publish_at(std::string target, std::string staging) {
    publish_request req;
    req.target = std::move(target);
    req.staging_path = std::move(staging);
    return req;
  }

  uint64_t calls(const char* call) {
    return stats->backends.call_duration.at("local", call).snapshot().count;
  }
};

} // namespace

TEST_F(volume_telemetry_test, every_gauge_equals_a_recount_of_the_records_after_a_mixed_workload) {
  // Loaded state: a counted Docker volume and a staged, published CSI volume. The
  // host holds their mounts, so they reconcile without a backend call.
  volume_record docker_old;
  docker_old.name = "old";
  docker_old.backend = "local";
  docker_old.owner = record_owner::docker;
  docker_old.mounts = {{"c1", 1}, {"c2", 1}};
  docker_old.mounted = true;
  docker_old.mountpoint = "/fake/old";
  volume_record csi_old;
  csi_old.name = "pvc-old";
  csi_old.backend = "local";
  csi_old.owner = record_owner::csi;
  csi_old.capacity_bytes = 8 * test::fake_backend::mib;
  csi_old.staging_path = "/stage/pvc-old";
  csi_old.published["/pods/x"] = publication{};
  // A third one's publication vanished and cannot be made again: its reconciliation
  // drops it from the record (on the executor).
  auto csi_lost = csi_old;
  csi_lost.name = "pvc-lost";
  csi_lost.staging_path = "/stage/pvc-lost";
  csi_lost.published = {{"/pods/lost", publication{}}};
  storage->fail_publish = true;
  auto host = std::make_shared<const std::set<std::string>>(
    std::set<std::string>{"/fake/old", "/stage/pvc-old", "/pods/x", "/stage/pvc-lost"});
  start({docker_old, csi_old, csi_lost}, host);
  ASSERT_EQ(list().size(), 3u);
  wait_started({"old", "pvc-old", "pvc-lost"}); // and counted itself
  // Each volume's first reconciliation is the step it starts with: once every volume is
  // idle, each has ended it.
  ok<atom::ok>(atom::drain_v);
  ASSERT_EQ(stats->volumes.reconcile_pending.value(), 0);
  storage->fail_publish = false;
  EXPECT_EQ(stats->reconcile_actions.value("republish_failed"), 1u);
  EXPECT_EQ(calls("reconcile"), 1u) << "only pvc-lost needed the host";
  expect_gauges_match_records();

  // Docker: create, mount (host and counted), unmount, remove.
  ok<atom::ok>(atom::create_v, std::string{"d1"}, option_map{});
  ok<atom::ok>(atom::create_v, std::string{"d2"}, option_map{});
  ok<std::string>(atom::mount_v, std::string{"d1"}, std::string{"a"}, std::string{}, caller{});
  ok<std::string>(atom::mount_v, std::string{"d1"}, std::string{"b"}, std::string{}, caller{});
  ok<std::string>(atom::mount_v, std::string{"d2"}, std::string{"c"}, std::string{}, caller{});
  ok<atom::ok>(atom::unmount_v, std::string{"d1"}, std::string{"a"});
  ok<atom::ok>(atom::unmount_v, std::string{"old"}, std::string{"c1"});
  expect_gauges_match_records();
  ok<atom::ok>(atom::unmount_v, std::string{"d2"}, std::string{"c"});
  ok<atom::ok>(atom::remove_v, std::string{"d2"}, record_owner::docker,
               record_kind::volume);

  // CSI: create, stage, publish twice, unpublish, a second volume staged and
  // unstaged and deleted, a snapshot, unpublish of the loaded volume.
  ok<volume_record>(atom::create_v, std::string{"pvc-1"}, csi_spec());
  ok<atom::ok>(atom::stage_v, std::string{"pvc-1"}, stage_at("/stage/pvc-1"));
  ok<atom::ok>(atom::publish_v, std::string{"pvc-1"}, publish_at("/pods/a", "/stage/pvc-1"));
  ok<atom::ok>(atom::publish_v, std::string{"pvc-1"}, publish_at("/pods/b", "/stage/pvc-1"));
  ok<atom::ok>(atom::unpublish_v, std::string{"pvc-1"}, std::string{"/pods/a"});
  ok<volume_record>(atom::create_v, std::string{"pvc-2"}, csi_spec());
  ok<atom::ok>(atom::stage_v, std::string{"pvc-2"}, stage_at("/stage/pvc-2"));
  expect_gauges_match_records();
  ok<atom::ok>(atom::unstage_v, std::string{"pvc-2"}, std::string{"/stage/pvc-2"});
  ok<atom::ok>(atom::remove_v, std::string{"pvc-2"}, record_owner::csi,
               record_kind::volume);
  ok<volume_record>(atom::create_v, std::string{"snap-1"},
                    csi_spec(record_kind::snapshot, "pvc-1"));
  ok<atom::ok>(atom::unpublish_v, std::string{"pvc-old"}, std::string{"/pods/x"});
  expect_gauges_match_records();

  // Requests the records refuse change no gauge.
  EXPECT_TRUE(test::call<atom::ok>(self, reg, atom::remove_v, std::string{"pvc-1"},
                                   record_owner::csi, record_kind::volume))
    << "a published volume is in use";
  auto records = list();
  EXPECT_EQ(records.size(), 6u) << "old, pvc-old, pvc-lost, d1, pvc-1, snap-1";
  expect_gauges_match_records();

  // The backend calls were timed under their names.
  EXPECT_EQ(calls("create"), 4u) << "d1, d2, pvc-1, pvc-2";
  EXPECT_EQ(calls("snapshot"), 1u);
  EXPECT_EQ(calls("mount"), 2u);
  EXPECT_EQ(calls("unmount"), 1u) << "d2; the others were counted only";
  EXPECT_EQ(calls("stage"), 2u);
  EXPECT_EQ(calls("unstage"), 1u);
  EXPECT_EQ(calls("publish"), 2u);
  EXPECT_EQ(calls("unpublish"), 2u);
  EXPECT_EQ(calls("remove"), 2u);
  EXPECT_EQ(stats->backends.call_duration.at("local", "other").snapshot().count, 0u)
    << "every call has a name of backend_call_names()";
}
