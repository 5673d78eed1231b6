// berthd's metric families from a telemetry with known values: the exact lines a
// scrape shows (names, sorted labels, cumulative buckets), and which series appear.

#include "protocols/metrics/collect.hpp"

#include <chrono>
#include <sstream>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/metrics/exposition.hpp"

namespace berth::metrics {
namespace {

const build_info test_build{"1.2.3", "abc1234"};

std::string page_of(const telemetry& t, const process_stats* proc = nullptr) {
  auto out = render(collect(t, proc, test_build));
  EXPECT_TRUE(out) << describe(out.error());
  return out ? *out : "";
}

/// True when `page` holds `line` as a whole line.
bool has_line(const std::string& page, const std::string& line) {
  std::istringstream in{page};
  for (std::string l; std::getline(in, l);) {
    if (l == line) {
      return true;
    }
  }
  return false;
}

#define EXPECT_LINE(page, line) EXPECT_TRUE(has_line(page, line)) << "no line: " << (line) \
                                                                   << "\nin:\n" << (page)
#define EXPECT_NO_TEXT(page, text) EXPECT_EQ((page).find(text), std::string::npos) \
                                     << "unexpected: " << (text) << "\nin:\n" << (page)

TEST(collect, counts_operations_by_protocol_operation_and_code) {
  telemetry t{{"block", "local"}};
  t.operations.record("docker", "mount", "ok", 0.002);
  t.operations.record("docker", "mount", "ok", 0.002);
  t.operations.record("docker", "mount", "not_found", 0.0003);
  t.operations.record("csi", "NodeStageVolume", "ok", 0.05);
  auto page = page_of(t);
  EXPECT_LINE(page, "# TYPE berth_operations_total counter");
  EXPECT_LINE(page, "berth_operations_total{code=\"ok\",operation=\"mount\",protocol=\"docker\"} 2");
  EXPECT_LINE(page,
              "berth_operations_total{code=\"not_found\",operation=\"mount\",protocol=\"docker\"} 1");
  EXPECT_LINE(page, "berth_operations_total{code=\"ok\",operation=\"NodeStageVolume\","
                    "protocol=\"csi\"} 1");
  EXPECT_LINE(page, "# TYPE berth_operation_duration_seconds histogram");
  EXPECT_LINE(page, "berth_operation_duration_seconds_bucket{operation=\"mount\","
                    "protocol=\"docker\",le=\"0.00025\"} 0");
  EXPECT_LINE(page, "berth_operation_duration_seconds_bucket{operation=\"mount\","
                    "protocol=\"docker\",le=\"0.0005\"} 1");
  EXPECT_LINE(page, "berth_operation_duration_seconds_bucket{operation=\"mount\","
                    "protocol=\"docker\",le=\"0.0025\"} 3");
  EXPECT_LINE(page, "berth_operation_duration_seconds_bucket{operation=\"mount\","
                    "protocol=\"docker\",le=\"+Inf\"} 3");
  EXPECT_LINE(page, "berth_operation_duration_seconds_count{operation=\"mount\","
                    "protocol=\"docker\"} 3");
  EXPECT_LINE(page, "berth_operation_duration_seconds_bucket{operation=\"NodeStageVolume\","
                    "protocol=\"csi\",le=\"0.05\"} 1");
}

TEST(collect, shows_only_operations_and_codes_that_were_counted) {
  telemetry t{{"block", "local"}};
  auto empty = page_of(t);
  EXPECT_LINE(empty, "# TYPE berth_operations_total counter");
  EXPECT_NO_TEXT(empty, "berth_operations_total{");
  EXPECT_NO_TEXT(empty, "berth_operation_duration_seconds_bucket");
  t.operations.record("docker", "mount", "ok", 0.001);
  auto page = page_of(t);
  EXPECT_NO_TEXT(page, "code=\"timeout\"");
  EXPECT_NO_TEXT(page, "operation=\"unmount\"");
  EXPECT_NO_TEXT(page, "protocol=\"csi\"");
  EXPECT_NO_TEXT(page, "protocol=\"admin\"");
}

TEST(collect, shows_only_backend_calls_that_were_timed) {
  telemetry t{{"block", "local"}};
  t.backends.call_duration.at("local", "mount").observe(0.01);
  t.backends.timeouts.add("block");
  auto page = page_of(t);
  EXPECT_LINE(page, "berth_backend_call_duration_seconds_bucket{backend=\"local\",call=\"mount\","
                    "le=\"0.005\"} 0");
  EXPECT_LINE(page, "berth_backend_call_duration_seconds_bucket{backend=\"local\",call=\"mount\","
                    "le=\"0.01\"} 1");
  EXPECT_LINE(page, "berth_backend_call_duration_seconds_sum{backend=\"local\",call=\"mount\"} "
                    "0.01");
  EXPECT_LINE(page,
              "berth_backend_call_duration_seconds_count{backend=\"local\",call=\"mount\"} 1");
  EXPECT_NO_TEXT(page, "call=\"unmount\"");
  EXPECT_NO_TEXT(page, "berth_backend_call_duration_seconds_count{backend=\"block\"");
  // Counters by a fixed label list every value, zeros included.
  EXPECT_LINE(page, "berth_backend_timeouts_total{backend=\"block\"} 1");
  EXPECT_LINE(page, "berth_backend_timeouts_total{backend=\"local\"} 0");
  EXPECT_LINE(page, "berth_backend_timeouts_total{backend=\"other\"} 0");
}

TEST(collect, volume_gauges_follow_the_records) {
  telemetry t{{"block", "local"}};
  volume_record mounted;
  mounted.name = "v1";
  mounted.backend = "local";
  mounted.mounts["c1"] = 1;
  mounted.mounts["c2"] = 2;
  volume_record staged;
  staged.name = "b1";
  staged.backend = "block";
  staged.staging_path = "/var/lib/kubelet/stage/b1";
  t.volumes.replace(nullptr, &mounted);
  t.volumes.replace(nullptr, &staged);
  t.volumes.uncertain.set(1);
  t.volumes.reconcile_pending.set(3);
  auto page = page_of(t);
  EXPECT_LINE(page, "# TYPE berth_volumes gauge");
  EXPECT_LINE(page, "berth_volumes{backend=\"local\",kind=\"volume\",state=\"mounted\"} 1");
  EXPECT_LINE(page, "berth_volumes{backend=\"block\",kind=\"volume\",state=\"staged\"} 1");
  EXPECT_LINE(page, "berth_volumes{backend=\"local\",kind=\"volume\",state=\"idle\"} 0");
  EXPECT_LINE(page, "berth_volumes{backend=\"local\",kind=\"snapshot\",state=\"idle\"} 0");
  EXPECT_LINE(page, "berth_mount_ids 2");
  EXPECT_LINE(page, "berth_csi_staged 1");
  EXPECT_LINE(page, "berth_csi_published 0");
  EXPECT_LINE(page, "berth_volumes_uncertain 1");
  EXPECT_LINE(page, "berth_reconcile_pending_volumes 3");
}

TEST(collect, persistence_modify_and_reconcile_families) {
  telemetry t{{"block", "local"}};
  t.persistence.journal_appends.add(5);
  t.persistence.fsync_duration.observe(0.0007);
  t.persistence.group_commit_records.observe(3);
  t.persistence.journal_bytes.set(4096);
  t.persistence.snapshot_duration.observe(0.2);
  t.modify_requests.add(modify_result::received, 2);
  t.modify_requests.add(modify_result::merged);
  t.modify_backend_calls.add("block");
  t.reconcile_actions.add("remounted", 4);
  auto page = page_of(t);
  EXPECT_LINE(page, "# TYPE berth_journal_appends_total counter");
  EXPECT_LINE(page, "berth_journal_appends_total 5");
  EXPECT_LINE(page, "berth_journal_fsync_duration_seconds_bucket{le=\"0.0005\"} 0");
  EXPECT_LINE(page, "berth_journal_fsync_duration_seconds_bucket{le=\"0.001\"} 1");
  EXPECT_LINE(page, "berth_journal_fsync_duration_seconds_count 1");
  EXPECT_LINE(page, "berth_group_commit_records_bucket{le=\"2\"} 0");
  EXPECT_LINE(page, "berth_group_commit_records_bucket{le=\"4\"} 1");
  EXPECT_LINE(page, "berth_group_commit_records_bucket{le=\"4096\"} 1");
  EXPECT_LINE(page, "berth_journal_bytes 4096");
  EXPECT_LINE(page, "berth_snapshot_duration_seconds_bucket{le=\"0.25\"} 1");
  EXPECT_LINE(page, "berth_modify_requests_total{result=\"received\"} 2");
  EXPECT_LINE(page, "berth_modify_requests_total{result=\"merged\"} 1");
  EXPECT_LINE(page, "berth_modify_requests_total{result=\"applied\"} 0");
  EXPECT_LINE(page, "berth_modify_backend_calls_total{backend=\"block\"} 1");
  EXPECT_LINE(page, "berth_modify_backend_calls_total{backend=\"local\"} 0");
  EXPECT_LINE(page, "berth_reconcile_actions_total{action=\"remounted\"} 4");
  EXPECT_LINE(page, "berth_reconcile_actions_total{action=\"cleared\"} 0");
  t.mount_ids_released.add("died", 2);
  t.docker_engine_up.set(1);
  t.unclaimed_volumes.set(3);
  page = page_of(t);
  EXPECT_LINE(page, "berth_mount_ids_released_total{reason=\"died\"} 2");
  EXPECT_LINE(page, "berth_mount_ids_released_total{reason=\"operator\"} 0");
  EXPECT_LINE(page, "berth_docker_engine_up 1");
  EXPECT_LINE(page, "berth_unclaimed_volumes 3");
}

TEST(collect, ready_build_and_process_families) {
  telemetry t{{"local"}};
  process_stats proc{1764590000.5, 12345678, 7};
  auto page = page_of(t, &proc);
  EXPECT_LINE(page, "berth_ready 0");
  EXPECT_LINE(page, "berth_build_info{revision=\"abc1234\",version=\"1.2.3\"} 1");
  EXPECT_LINE(page, "# TYPE process_start_time_seconds gauge");
  EXPECT_LINE(page, "process_start_time_seconds 1764590000.5");
  EXPECT_LINE(page, "process_resident_memory_bytes 12345678");
  EXPECT_LINE(page, "process_open_fds 7");
  t.ready.state_loaded = true;
  t.ready.serving = true;
  EXPECT_LINE(page_of(t), "berth_ready 1");
  EXPECT_NO_TEXT(page_of(t), "process_open_fds"); // no /proc figures given: left out
}

TEST(collect, abnormal_volumes_by_reason_every_reason_even_at_zero) {
  telemetry t{{"block"}};
  EXPECT_LINE(page_of(t), R"(berth_volume_abnormal{reason="image_missing"} 0)");
  EXPECT_LINE(page_of(t), R"(berth_volume_abnormal{reason="call_hung"} 0)");
  t.health.replace_observed({{"a", {{abnormal_reason::mount_gone, "gone"}}},
                             {"b", {{abnormal_reason::mount_gone, "gone"}}}});
  t.health.set_hung("a", "unmount hung");
  auto page = page_of(t);
  EXPECT_LINE(page, R"(berth_volume_abnormal{reason="mount_gone"} 2)");
  EXPECT_LINE(page, R"(berth_volume_abnormal{reason="call_hung"} 1)");
  EXPECT_LINE(page, R"(berth_volume_abnormal{reason="image_missing"} 0)");
}

TEST(collect, used_bytes_of_each_measured_volume_with_its_limit) {
  telemetry t{{"block"}};
  auto page = page_of(t);
  EXPECT_LINE(page, "berth_volume_usage_omitted 0");
  EXPECT_NO_TEXT(page, "berth_volume_used_bytes{");
  t.usage.replace({{"data", {12582912, 67108864}}, {"logs", {4096, 33554432}}}, 3);
  page = page_of(t);
  EXPECT_LINE(page, R"(berth_volume_used_bytes{volume="data"} 12582912)");
  EXPECT_LINE(page, R"(berth_volume_limit_bytes{volume="data"} 67108864)");
  EXPECT_LINE(page, R"(berth_volume_used_bytes{volume="logs"} 4096)");
  EXPECT_LINE(page, R"(berth_volume_limit_bytes{volume="logs"} 33554432)");
  EXPECT_LINE(page, "berth_volume_usage_omitted 3");
  EXPECT_NO_TEXT(page, "berth_volume_allocated_bytes{") << "not measured: no series";
  EXPECT_NO_TEXT(page, "berth_volume_direct_io{");
}

TEST(collect, allocated_bytes_and_direct_io_of_each_measured_image) {
  telemetry t{{"block"}};
  t.usage.replace({{"db", {4096, 1 << 30, 8 << 20, direct_io_state::on}},
                   {"cache", {4096, 1 << 30, 12 << 20, direct_io_state::off}}},
                  0);
  auto page = page_of(t);
  EXPECT_LINE(page, R"(berth_volume_allocated_bytes{volume="db"} 8388608)");
  EXPECT_LINE(page, R"(berth_volume_direct_io{volume="db"} 1)");
  EXPECT_LINE(page, R"(berth_volume_allocated_bytes{volume="cache"} 12582912)");
  EXPECT_LINE(page, R"(berth_volume_direct_io{volume="cache"} 0)");
}

TEST(collect, how_loop_devices_were_attached) {
  telemetry t{{"block"}};
  t.loop->configured.add(3);
  t.loop->set_fd.add(1);
  t.loop->direct_io_unavailable.add(2);
  auto page = page_of(t);
  EXPECT_LINE(page, R"(berth_loop_attaches_total{method="configure"} 3)");
  EXPECT_LINE(page, R"(berth_loop_attaches_total{method="set_fd"} 1)");
  EXPECT_LINE(page, "berth_loop_direct_io_unavailable_total 2");
}

TEST(collect, every_family_of_the_contract_is_on_the_page) {
  telemetry t{{"block", "local"}};
  process_stats proc;
  auto page = page_of(t, &proc);
  for (auto [name, type] : std::initializer_list<std::pair<const char*, const char*>>{
         {"berth_operations_total", "counter"},
         {"berth_operation_duration_seconds", "histogram"},
         {"berth_volumes", "gauge"},
         {"berth_mount_ids", "gauge"},
         {"berth_csi_staged", "gauge"},
         {"berth_csi_published", "gauge"},
         {"berth_volumes_uncertain", "gauge"},
         {"berth_reconcile_pending_volumes", "gauge"},
         {"berth_modify_requests_total", "counter"},
         {"berth_modify_backend_calls_total", "counter"},
         {"berth_journal_appends_total", "counter"},
         {"berth_journal_fsync_duration_seconds", "histogram"},
         {"berth_group_commit_records", "histogram"},
         {"berth_journal_bytes", "gauge"},
         {"berth_snapshot_duration_seconds", "histogram"},
         {"berth_backend_call_duration_seconds", "histogram"},
         {"berth_backend_timeouts_total", "counter"},
         {"berth_reconcile_actions_total", "counter"},
         {"berth_mount_ids_released_total", "counter"},
         {"berth_docker_engine_up", "gauge"},
         {"berth_unclaimed_volumes", "gauge"},
         {"berth_volume_used_bytes", "gauge"},
         {"berth_volume_limit_bytes", "gauge"},
         {"berth_volume_usage_omitted", "gauge"},
         {"berth_volume_allocated_bytes", "gauge"},
         {"berth_volume_direct_io", "gauge"},
         {"berth_volume_abnormal", "gauge"},
         {"berth_loop_attaches_total", "counter"},
         {"berth_loop_direct_io_unavailable_total", "counter"},
         {"berth_ready", "gauge"},
         {"berth_build_info", "gauge"},
         {"process_start_time_seconds", "gauge"},
         {"process_resident_memory_bytes", "gauge"},
         {"process_open_fds", "gauge"}}) {
    EXPECT_LINE(page, std::string{"# TYPE "} + name + " " + type);
  }
}

TEST(process_stats, reads_this_process_from_proc) {
  auto proc = read_process_stats();
  ASSERT_TRUE(proc) << describe(proc.error());
  auto now = std::chrono::duration<double>(
               std::chrono::system_clock::now().time_since_epoch()).count();
  // Started before now, and not before the test binary could have been built.
  EXPECT_LE(proc->start_time_seconds, now + 1);
  EXPECT_GT(proc->start_time_seconds, now - 24 * 3600);
  EXPECT_GT(proc->resident_memory_bytes, 1 << 20);
  EXPECT_GE(proc->open_fds, 3); // stdin, stdout, stderr
  auto page = scrape(telemetry{{"local"}});
  ASSERT_TRUE(page) << describe(page.error());
  EXPECT_NE(page->find("process_open_fds "), std::string::npos);
}

} // namespace
} // namespace berth::metrics
