// GET /v1/status and /v1/operations, the counting of admin requests, and berthctl status
// against a telemetry holding known values.

#include "protocols/admin/admin_telemetry.hpp"

#include <rapidjson/document.h>
#include <gtest/gtest.h>

#include "apps/berthctl/berthctl_status.hpp"
#include "core/build_info.hpp"
#include "core/errors.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/admin_fixture.hpp"

using namespace berth;

namespace {

using admin_telemetry_test = test::admin_fixture;
using std::chrono::seconds;

rapidjson::Document parse(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  EXPECT_FALSE(doc.HasParseError()) << body;
  return doc;
}

/// Three volumes (idle on block, mounted by two IDs, staged and published twice) and a
/// snapshot, a journal of 12345 bytes with 7 appends and 2 fsyncs.
void fill(telemetry& t) {
  volume_record idle;
  idle.name = "idle";
  idle.backend = "local";
  volume_record mounted = idle;
  mounted.name = "m";
  mounted.mounts = {{"id1", 1}, {"id2", 3}};
  volume_record published = idle;
  published.name = "p";
  published.staging_path = "/staging/p";
  published.published["/t1"] = publication{};
  published.published["/t2"] = publication{};
  volume_record snap = idle;
  snap.name = "s";
  snap.kind = record_kind::snapshot;
  for (auto* rec : {&idle, &mounted, &published, &snap}) {
    t.volumes.replace(nullptr, rec);
  }
  t.persistence.journal_bytes.set(12345);
  t.persistence.journal_appends.add(7);
  t.persistence.fsync_duration.observe(0.004);
  t.persistence.fsync_duration.observe(0.0015);
  t.persistence.last_fsync_seconds = 0.0015;
}

const rapidjson::Value* find_op(const rapidjson::Document& doc, const char* protocol,
                                const char* operation) {
  for (const auto& op : doc["operations"].GetArray()) {
    if (std::string{op["protocol"].GetString()} == protocol
        && std::string{op["operation"].GetString()} == operation) {
      return &op;
    }
  }
  return nullptr;
}

} // namespace

TEST(admin_telemetry, status_json_holds_every_field) {
  telemetry t{{"local", "block"}};
  fill(t);
  t.ready.state_loaded = true;
  t.ready.serving = true;
  t.volumes.uncertain.set(1);
  t.ready.started = std::chrono::system_clock::from_time_t(1796126400); // 2026-12-01T12:00:00Z
  auto doc = parse(admin::status_json(t, t.ready.started + seconds(3725)));
  ASSERT_TRUE(doc.IsObject());
  EXPECT_STREQ(doc["version"].GetString(), BERTH_VERSION);
  // The same revision as berth_build_info on /metrics.
  EXPECT_EQ(doc["revision"].GetString(), this_build().revision);
  EXPECT_STREQ(doc["started_at"].GetString(), "2026-12-01T12:00:00Z");
  EXPECT_DOUBLE_EQ(doc["uptime_seconds"].GetDouble(), 3725.0);
  EXPECT_TRUE(doc["ready"].GetBool());
  EXPECT_STREQ(doc["not_ready_reason"].GetString(), "");
  EXPECT_EQ(doc["volumes"]["total"].GetInt64(), 3);
  const auto& by_state = doc["volumes"]["by_state"];
  EXPECT_EQ(by_state["idle"].GetInt64(), 1);
  EXPECT_EQ(by_state["mounted"].GetInt64(), 1);
  EXPECT_EQ(by_state["staged"].GetInt64(), 0);
  EXPECT_EQ(by_state["published"].GetInt64(), 1);
  EXPECT_EQ(doc["snapshots"].GetInt64(), 1);
  EXPECT_EQ(doc["mount_ids"].GetInt64(), 2);
  EXPECT_EQ(doc["csi_staged"].GetInt64(), 1);
  EXPECT_EQ(doc["csi_published"].GetInt64(), 2);
  EXPECT_EQ(doc["uncertain"].GetInt64(), 1);
  EXPECT_EQ(doc["reconcile_pending"].GetInt64(), 0);
  EXPECT_EQ(doc["journal_bytes"].GetInt64(), 12345);
  EXPECT_EQ(doc["journal_appends"].GetUint64(), 7u);
  EXPECT_EQ(doc["fsyncs"].GetUint64(), 2u);
  EXPECT_DOUBLE_EQ(doc["last_fsync_seconds"].GetDouble(), 0.0015);
}

TEST(admin_telemetry, status_json_says_why_not_ready_and_never_a_negative_uptime) {
  telemetry t{{"local"}};
  auto doc = parse(admin::status_json(t, t.ready.started - seconds(5)));
  EXPECT_FALSE(doc["ready"].GetBool());
  EXPECT_STREQ(doc["not_ready_reason"].GetString(), "the state is loading");
  EXPECT_DOUBLE_EQ(doc["uptime_seconds"].GetDouble(), 0.0);
  EXPECT_EQ(doc["volumes"]["total"].GetInt64(), 0);
  EXPECT_EQ(doc["fsyncs"].GetUint64(), 0u);
}

TEST(admin_telemetry, operations_json_lists_what_counted_with_codes_and_buckets) {
  telemetry t{{"local"}};
  t.operations.record("docker", "mount", "ok", 0.0002);
  t.operations.record("docker", "mount", "ok", 0.0002);
  t.operations.record("docker", "mount", "not_found", 0.02);
  t.operations.record("csi", "NodeStageVolume", "ok", 100); // past the last bound: +Inf
  auto now = std::chrono::steady_clock::time_point{seconds(4242)};
  auto doc = parse(admin::operations_json(t, now));
  EXPECT_DOUBLE_EQ(doc["monotonic_seconds"].GetDouble(), 4242.0);
  ASSERT_EQ(doc["operations"].Size(), 2u) << "only operations that counted";
  // Sorted by (protocol, operation).
  EXPECT_STREQ(doc["operations"][0]["protocol"].GetString(), "csi");
  auto* mount = find_op(doc, "docker", "mount");
  ASSERT_NE(mount, nullptr);
  EXPECT_EQ((*mount)["count"].GetUint64(), 3u);
  const auto& codes = (*mount)["codes"];
  EXPECT_EQ(codes.MemberCount(), 2u) << "codes with a count only";
  EXPECT_EQ(codes["ok"].GetUint64(), 2u);
  EXPECT_EQ(codes["not_found"].GetUint64(), 1u);
  const auto& d = (*mount)["duration"];
  ASSERT_EQ(d["upper_bounds"].Size(), latency_buckets().size());
  ASSERT_EQ(d["cumulative_counts"].Size(), latency_buckets().size());
  for (size_t i = 0; i < latency_buckets().size(); ++i) {
    double bound = latency_buckets()[i];
    EXPECT_DOUBLE_EQ(d["upper_bounds"][i].GetDouble(), bound);
    uint64_t want = (bound >= 0.0002 ? 2 : 0) + (bound >= 0.02 ? 1 : 0);
    EXPECT_EQ(d["cumulative_counts"][i].GetUint64(), want) << "le " << bound;
  }
  EXPECT_DOUBLE_EQ(d["sum"].GetDouble(), 0.0204);
  EXPECT_EQ(d["count"].GetUint64(), 3u);
  auto* stage = find_op(doc, "csi", "NodeStageVolume");
  ASSERT_NE(stage, nullptr);
  EXPECT_EQ((*stage)["duration"]["cumulative_counts"][latency_buckets().size() - 1].GetUint64(),
            0u);
  EXPECT_EQ((*stage)["duration"]["count"].GetUint64(), 1u);
}

TEST_F(admin_telemetry_test, status_route_answers_from_the_telemetry) {
  fill(*stats);
  stats->ready.state_loaded = true;
  unix_http_client client{path};
  auto res = client.get("/v1/status");
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_EQ(res->status, 200u);
  auto doc = parse(res->body);
  EXPECT_FALSE(doc["ready"].GetBool());
  EXPECT_STREQ(doc["not_ready_reason"].GetString(), "the sockets are not accepting yet");
  EXPECT_EQ(doc["journal_bytes"].GetInt64(), 12345);
  auto post = client.post("/v1/status", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405u);
  EXPECT_EQ(post->body, R"({"error":"method \"POST\" not allowed: use GET"})");
}

TEST_F(admin_telemetry_test, every_admin_request_is_counted_by_route_and_code) {
  unix_http_client client{path};
  ASSERT_EQ(client.get("/v1/volumes")->status, 200u);
  ASSERT_EQ(client.get("/v1/volumes/alpha")->status, 200u);
  ASSERT_EQ(client.get("/v1/volumes/gamma")->status, 404u);
  ASSERT_EQ(client.get("/v1/volumes/..bad")->status, 400u);
  ASSERT_EQ(client.get("/v2/things")->status, 404u);
  ASSERT_EQ(client.post("/v1/volumes", "{}", "application/json")->status, 405u);
  ASSERT_EQ(client.post("/v1/volumes/alpha/resize", "{}", "application/json")->status, 400u);
  ASSERT_EQ(client.get("/v1/status")->status, 200u);
  auto res = client.get("/v1/operations");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200u);
  auto doc = parse(res->body);
  auto codes = [&doc](const char* op) {
    std::map<std::string, uint64_t> out;
    auto* row = find_op(doc, "admin", op);
    if (row != nullptr) {
      for (const auto& m : (*row)["codes"].GetObject()) {
        out[m.name.GetString()] = m.value.GetUint64();
      }
    }
    return out;
  };
  using counts = std::map<std::string, uint64_t>;
  EXPECT_EQ(codes("list"), (counts{{"ok", 1}, {"unsupported", 1}}));
  EXPECT_EQ(codes("get"), (counts{{"ok", 1}, {"not_found", 1}, {"invalid_argument", 1}}));
  EXPECT_EQ(codes("other"), (counts{{"not_found", 1}}));
  EXPECT_EQ(codes("resize"), (counts{{"invalid_argument", 1}}));
  EXPECT_EQ(codes("status"), (counts{{"ok", 1}}));
  // The answer is written before the request counts: this one is not in it yet.
  EXPECT_EQ(find_op(doc, "admin", "operations"), nullptr);
  auto again = parse(client.get("/v1/operations")->body);
  auto* ops = find_op(again, "admin", "operations");
  ASSERT_NE(ops, nullptr);
  EXPECT_EQ((*ops)["count"].GetUint64(), 1u);
  EXPECT_GE(again["monotonic_seconds"].GetDouble(), doc["monotonic_seconds"].GetDouble());
  // The latency is arrival to answer: positive, far below the test's own run time.
  auto sum = (*find_op(again, "admin", "list"))["duration"]["sum"].GetDouble();
  EXPECT_GT(sum, 0.0);
  EXPECT_LT(sum, 10.0);
}

TEST_F(admin_telemetry_test, berthctl_status_prints_text_and_json) {
  fill(*stats);
  stats->ready.state_loaded = true;
  stats->ready.serving = true;
  std::string out;
  std::string err;
  ASSERT_EQ(ctl({"status"}, out, err), 0) << err;
  EXPECT_EQ(out.rfind("version:    berthd " BERTH_VERSION " (revision ", 0), 0u) << out;
  EXPECT_NE(out.find("\nready:      yes\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\nvolumes:    3 (1 idle, 1 mounted, 0 staged, 1 published); 1 snapshot\n"
                     "mounts:     2 Docker mount IDs; CSI 1 staged, 2 published\n"
                     "journal:    12.1 KiB (12345 bytes), 7 appends\n"
                     "last fsync: 1.50ms (2 fsyncs)\n"),
            std::string::npos)
    << out;
  ASSERT_EQ(ctl({"status", "--json"}, out, err), 0) << err;
  auto status = cli::parse_status(out);
  ASSERT_TRUE(status) << describe(status.error()) << out;
  EXPECT_EQ(status->journal_bytes, 12345);
  EXPECT_TRUE(status->ready);
}

TEST_F(admin_telemetry_test, berthctl_top_json_prints_one_view_of_an_interval) {
  unix_http_client client{path};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(client.get("/v1/volumes")->status, 200u);
  }
  std::string out;
  std::string err;
  ASSERT_EQ(ctl({"top", "--json", "--interval", "0.2"}, out, err), 0) << err;
  auto doc = parse(out);
  ASSERT_TRUE(doc.IsObject()) << out;
  EXPECT_GE(doc["interval_seconds"].GetDouble(), 0.2);
  const rapidjson::Value* list = nullptr;
  const rapidjson::Value* ops = nullptr;
  for (const auto& row : doc["operations"].GetArray()) {
    std::string op = row["operation"].GetString();
    if (op == "list") {
      list = &row;
    } else if (op == "operations") {
      ops = &row;
    }
  }
  ASSERT_NE(list, nullptr) << out;
  EXPECT_EQ((*list)["total"].GetUint64(), 3u);
  EXPECT_DOUBLE_EQ((*list)["rate_per_second"].GetDouble(), 0.0) << "nothing listed meanwhile";
  EXPECT_TRUE((*list)["p50_seconds"].IsNull()) << "no list answered in the interval";
  // top's own first sample was answered in the interval.
  ASSERT_NE(ops, nullptr) << out;
  EXPECT_EQ((*ops)["total"].GetUint64(), 1u);
  EXPECT_GT((*ops)["rate_per_second"].GetDouble(), 0.0);
  EXPECT_TRUE((*ops)["p50_seconds"].IsNumber());
  EXPECT_STREQ(doc["operations"][0]["operation"].GetString(), "operations") << "by rate";
}
