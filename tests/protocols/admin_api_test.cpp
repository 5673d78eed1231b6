#include "protocols/admin/admin_api.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/record_json.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/admin_fixture.hpp"

using namespace berth;

namespace {

using admin_api_test = test::admin_fixture;

} // namespace

TEST_F(admin_api_test, lists_every_record) {
  unix_http_client client{path};
  auto res = client.get("/v1/volumes");
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_EQ(res->status, 200u);
  rapidjson::Document doc;
  doc.Parse(res->body.c_str());
  ASSERT_TRUE(doc.IsArray()) << res->body;
  ASSERT_EQ(doc.Size(), 2u);
  auto alpha = read_record(doc[0]);
  ASSERT_TRUE(alpha);
  EXPECT_EQ(alpha->name, "alpha");
  EXPECT_EQ(alpha->mounts, (mount_counts{{"0123456789abcdef0123", 1}}));
  EXPECT_TRUE(alpha->mounted);
  auto beta = read_record(doc[1]);
  ASSERT_TRUE(beta);
  EXPECT_EQ(beta->options, (option_map{{"type", "tmpfs"}}));
}

TEST_F(admin_api_test, gets_one_record_or_404) {
  unix_http_client client{path};
  auto res = client.get("/v1/volumes/beta");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200u);
  auto rec = record_from_json(res->body);
  ASSERT_TRUE(rec) << res->body;
  EXPECT_EQ(rec->name, "beta");
  auto missing = client.get("/v1/volumes/gamma");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404u);
  EXPECT_EQ(missing->body, R"({"error":"no volume named \"gamma\""})");
}

TEST_F(admin_api_test, refuses_invalid_names_unknown_paths_and_methods) {
  unix_http_client client{path};
  auto bad = client.get("/v1/volumes/..%2fetc");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400u);
  EXPECT_EQ(bad->body, R"({"error":"invalid volume name \"..%2fetc\": must match )"
                       R"([A-Za-z0-9][A-Za-z0-9_.-]{0,127}"})");
  auto unknown = client.get("/v2/things");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404u);
  auto post = client.post("/v1/volumes", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405u);
}

TEST_F(admin_api_test, berthctl_volumes_prints_a_table) {
  std::string out;
  std::string err;
  ASSERT_EQ(ctl({"volumes"}, out, err), 0) << err;
  EXPECT_EQ(out,
            "NAME    OWNER    KIND     BACKEND   SIZE   USED   ALLOCATED   MOUNTED   HEALTH   "
            "MOUNT IDS         PATH\n"
            "alpha   docker   volume   local     -      -      -           yes       ok       "
            "0123456789ab…:1   /mnt/berth/alpha\n"
            "beta    docker   volume   local     -      -      -           no        ok       -    "
            "             -\n");
  // What the usage sampler measured reaches the table and the record's JSON.
  stats->usage.replace(
    {{"alpha", {5ull << 20, 64ull << 20, 7ull << 20, direct_io_state::on}}}, 0);
  ASSERT_EQ(ctl({"volumes"}, out, err), 0) << err;
  EXPECT_NE(out.find("alpha   docker   volume   local     -      5.0M   7.0M        yes"),
            std::string::npos)
    << out;
  ASSERT_EQ(ctl({"inspect", "alpha", "--json"}, out, err), 0) << err;
  EXPECT_NE(out.find(R"("used_bytes":5242880,"allocated_bytes":7340032,"direct_io":true)"),
            std::string::npos)
    << out;
  ASSERT_EQ(ctl({"inspect", "beta", "--json"}, out, err), 0) << err;
  EXPECT_EQ(out.find("used_bytes"), std::string::npos) << "no figure, no field: " << out;
  EXPECT_EQ(out.find("allocated_bytes"), std::string::npos) << out;
  EXPECT_EQ(out.find("direct_io"), std::string::npos) << out;
  ASSERT_EQ(ctl({"volumes", "--json"}, out, err), 0) << err;
  EXPECT_EQ(out.front(), '[');
}

TEST_F(admin_api_test, berthctl_inspect_prints_one_volume) {
  std::string out;
  std::string err;
  ASSERT_EQ(ctl({"inspect", "alpha"}, out, err), 0) << err;
  EXPECT_EQ(out,
            "name:          alpha\n"
            "owner:         docker (the protocol that may use it)\n"
            "kind:          volume\n"
            "backend:       local\n"
            "created at:    2026-01-02T03:04:05Z\n"
            "options:       -\n"
            "size:          - (no size of its own)\n"
            "mutable:       -\n"
            "modifications: 0\n"
            "used:          - (measured while a block volume is mounted)\n"
            "health:        healthy\n"
            "mounted:       yes\n"
            "mountpoint:    /mnt/berth/alpha\n"
            "mounts:        1\n"
            "  0123456789abcdef0123: count 1, dockerd unknown, last mounted unknown\n");
  ASSERT_EQ(ctl({"inspect", "beta", "--json"}, out, err), 0) << err;
  EXPECT_TRUE(record_from_json(out));
  EXPECT_EQ(ctl({"inspect", "gamma"}, out, err), 1);
  EXPECT_EQ(err, "berthctl: no volume named \"gamma\"\n");
}
