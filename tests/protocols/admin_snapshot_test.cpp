// berthctl snapshot create, ls and rm through the admin API's snapshot routes, in front
// of the fake registry: what reaches it, and what is refused before it.

#include <gtest/gtest.h>

#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/admin_fixture.hpp"

namespace berth {
namespace {

class admin_snapshot_test : public test::admin_fixture {
protected:
  /// The record the fake registry holds for `name`, if any.
  caf::expected<volume_record> record(const std::string& name) {
    caf::scoped_actor self{*sys};
    caf::expected<volume_record> out = make_error(ec::internal, "no answer");
    self->request(reg, caf::infinite, atom::get_v, name)
      .receive([&](volume_record& rec) { out = rec; }, [&](caf::error& err) { out = err; });
    return out;
  }
};

TEST_F(admin_snapshot_test, create_ls_and_rm_of_a_docker_snapshot) {
  std::string out;
  std::string err;
  ASSERT_EQ(ctl({"snapshot", "create", "alpha", "s1"}, out, err), 0) << err;
  EXPECT_EQ(out.rfind("snapshot s1 of volume alpha taken", 0), 0u) << out;
  auto rec = record("s1");
  ASSERT_TRUE(rec) << describe(rec.error());
  EXPECT_EQ(rec->kind, record_kind::snapshot);
  EXPECT_EQ(rec->owner, record_owner::docker) << "taken in Docker's namespace";
  EXPECT_EQ(rec->source, volume_source("alpha"));

  ASSERT_EQ(ctl({"snapshot", "ls"}, out, err), 0) << err;
  EXPECT_EQ(out.rfind("NAME   VOLUME   BACKEND", 0), 0u) << out;
  EXPECT_NE(out.find("s1     alpha"), std::string::npos) << out;
  EXPECT_EQ(out.find("beta"), std::string::npos) << "volumes are not snapshots: " << out;
  ASSERT_EQ(ctl({"snapshot", "ls", "beta"}, out, err), 0) << err;
  EXPECT_EQ(out.find("s1"), std::string::npos) << "only beta's snapshots: " << out;
  ASSERT_EQ(ctl({"snapshot", "ls", "--json"}, out, err), 0) << err;
  EXPECT_NE(out.find(R"("name":"s1")"), std::string::npos) << out;

  ASSERT_EQ(ctl({"snapshot", "rm", "s1"}, out, err), 0) << err;
  EXPECT_EQ(out, "snapshot s1 removed\n");
  EXPECT_FALSE(record("s1")) << "gone from the registry";
  EXPECT_NE(ctl({"snapshot", "rm", "s1"}, out, err), 0);
  EXPECT_NE(err.find("s1"), std::string::npos) << err;
  EXPECT_NE(ctl({"snapshot", "rm", "alpha"}, out, err), 0) << "a volume is no snapshot";
  EXPECT_TRUE(record("alpha")) << "rm of a volume's name removes nothing";
}

TEST_F(admin_snapshot_test, bad_command_lines_and_names_are_refused_and_make_nothing) {
  std::string out;
  std::string err;
  for (const auto& args : std::vector<std::vector<std::string>>{
         {"snapshot"}, {"snapshot", "take", "alpha", "s1"}, {"snapshot", "create", "alpha"},
         {"snapshot", "ls", "a", "b"}, {"snapshot", "rm"}}) {
    EXPECT_EQ(ctl(args, out, err), 2) << args.size();
    EXPECT_NE(err.find("snapshot"), std::string::npos) << err;
  }
  EXPECT_NE(ctl({"snapshot", "create", "alpha", "../x"}, out, err), 0);
  EXPECT_NE(err.find(R"(invalid snapshot name "../x")"), std::string::npos) << err;
  EXPECT_FALSE(record("../x"));
}

TEST_F(admin_snapshot_test, routes_and_methods) {
  unix_http_client client{path};
  auto get_one = client.get("/v1/snapshots/s1");
  ASSERT_TRUE(get_one);
  EXPECT_EQ(get_one->status, 405u);
  EXPECT_EQ(get_one->body, R"({"error":"method \"GET\" not allowed: use DELETE"})");
  auto deep = client.remove("/v1/snapshots/s1/x");
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->status, 404u);
  auto bad_body = client.post("/v1/volumes/alpha/snapshot", R"({"snapshot": "s1"})",
                              "application/json");
  ASSERT_TRUE(bad_body);
  EXPECT_EQ(bad_body->status, 400u);
  EXPECT_EQ(bad_body->body, R"({"error":"unknown field \"snapshot\": send {\"name\": \"SNAPSHOT\"}"})");
  EXPECT_FALSE(record("s1"));
}

} // namespace
} // namespace berth
