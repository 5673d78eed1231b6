// The admin API's unclaimed routes (GET /v1/unclaimed, DELETE /v1/unclaimed/NAME) and
// `berthctl unclaimed [rm NAME]`, in front of a fake unclaimed_desk: what reaches the desk,
// what is refused before it, and how its answers become HTTP and berthctl's lines.

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/admin_fixture.hpp"

using namespace berth;

namespace {

/// Lists what the test set, and answers each removal with what the test set.
struct fake_unclaimed : unclaimed_desk {
  std::mutex mutex;
  caf::expected<unclaimed_volumes> listed = make_error(ec::unavailable, "not listed yet");
  caf::error removal;
  std::vector<std::string> removals;

  caf::expected<unclaimed_volumes> unclaimed() override {
    std::lock_guard lock{mutex};
    return listed;
  }

  void remove_unclaimed(std::string name, removed_fn done) override {
    caf::error res;
    {
      std::lock_guard lock{mutex};
      removals.push_back(name);
      res = removal;
    }
    // From another thread, as the node agent's worker answers.
    std::thread{[done, res]() { done(res); }}.detach();
  }
};

class admin_unclaimed_test : public test::admin_fixture {
protected:
  std::shared_ptr<fake_unclaimed> desk = std::make_shared<fake_unclaimed>();

  void SetUp() override {
    admin_fixture::SetUp();
    api = std::make_unique<admin_api>(*sys, reg, stats, nullptr, desk);
    unclaimed_volumes some;
    some.names = {"pvc-a", "pvc-b"};
    some.listed_at = std::chrono::system_clock::time_point{std::chrono::seconds{1764817200}};
    desk->listed = some;
  }
};

} // namespace

TEST_F(admin_unclaimed_test, lists_what_the_agent_found_unclaimed) {
  unix_http_client client{path};
  auto res = client.get("/v1/unclaimed");
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_EQ(res->status, 200u) << res->body;
  EXPECT_EQ(res->body, R"({"listed_at":"2025-12-04T03:00:00Z","unclaimed":["pvc-a","pvc-b"],)"
                       R"("unclaimed_snapshots":[]})");
  std::string out, err;
  ASSERT_EQ(ctl({"unclaimed"}, out, err), cli::exit_ok) << err;
  EXPECT_EQ(out, "2 CSI volume(s) recorded here that no BerthVolume names (as of the node "
                 "agent's LIST at 2025-12-04T03:00:00Z):\n  pvc-a\n  pvc-b\nberthd keeps them; "
                 "berthctl unclaimed rm NAME removes one, with its storage\n");
  desk->listed = unclaimed_volumes{{}, {"snap-a"}, std::chrono::system_clock::time_point{}};
  ASSERT_EQ(ctl({"unclaimed"}, out, err), cli::exit_ok) << err;
  EXPECT_EQ(out, "1 CSI snapshot(s) recorded here that no BerthSnapshot names (as of the node "
                 "agent's LIST at 1970-01-01T00:00:00Z):\n  snap-a\nberthd keeps them; "
                 "berthctl unclaimed rm NAME removes one, with its storage\n");
  desk->listed = unclaimed_volumes{{}, {}, std::chrono::system_clock::time_point{}};
  ASSERT_EQ(ctl({"unclaimed"}, out, err), cli::exit_ok) << err;
  EXPECT_EQ(out, "no unclaimed CSI volumes or snapshots (as of the node agent's LIST at "
                 "1970-01-01T00:00:00Z)\n");
}

TEST_F(admin_unclaimed_test, before_the_first_list_the_answer_is_unavailable) {
  desk->listed = make_error(ec::unavailable, "the node agent has not listed the BerthVolumes "
                                             "of node n1 yet: ask again once it has");
  unix_http_client client{path};
  auto res = client.get("/v1/unclaimed");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503u) << res->body;
  std::string out, err;
  EXPECT_EQ(ctl({"unclaimed"}, out, err), cli::exit_failure);
  EXPECT_NE(err.find("has not listed the BerthVolumes"), std::string::npos) << err;
}

TEST_F(admin_unclaimed_test, rm_asks_the_agent_and_answers_its_refusal) {
  std::string out, err;
  ASSERT_EQ(ctl({"unclaimed", "rm", "pvc-a"}, out, err), cli::exit_ok) << err;
  EXPECT_EQ(out, "unclaimed pvc-a removed, with its storage\n");
  desk->removal = make_error(ec::failed_precondition, "BerthVolume pvc-b names volume "
                                                      "\"pvc-b\" on node n1: it is not unclaimed");
  unix_http_client client{path};
  auto res = client.remove("/v1/unclaimed/pvc-b");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409u) << res->body;
  EXPECT_NE(res->body.find("it is not unclaimed"), std::string::npos) << res->body;
  EXPECT_EQ(ctl({"unclaimed", "rm", "pvc-b", "--json"}, out, err), cli::exit_failure);
  EXPECT_NE(err.find(R"("code":"failed_precondition")"), std::string::npos) << err;
  std::lock_guard lock{desk->mutex};
  EXPECT_EQ(desk->removals, (std::vector<std::string>{"pvc-a", "pvc-b", "pvc-b"}));
}

TEST_F(admin_unclaimed_test, a_bad_name_or_command_line_never_reaches_the_agent) {
  unix_http_client client{path};
  auto res = client.remove("/v1/unclaimed/bad%2Fname!");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400u) << res->body;
  res = client.get("/v1/unclaimed/pvc-a");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405u) << res->body;
  std::string out, err;
  EXPECT_EQ(ctl({"unclaimed", "rm"}, out, err), cli::exit_usage);
  EXPECT_NE(err.find("unclaimed rm takes one volume name"), std::string::npos) << err;
  EXPECT_EQ(ctl({"unclaimed", "pvc-a"}, out, err), cli::exit_usage);
  EXPECT_NE(err.find("unclaimed takes no arguments, or rm NAME"), std::string::npos) << err;
  std::lock_guard lock{desk->mutex};
  EXPECT_TRUE(desk->removals.empty());
}

TEST_F(admin_unclaimed_test, without_the_cluster_mode_both_routes_say_so) {
  api = std::make_unique<admin_api>(*sys, reg, stats);
  unix_http_client client{path};
  auto res = client.get("/v1/unclaimed");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409u) << res->body;
  EXPECT_NE(res->body.find("without --kubernetes"), std::string::npos) << res->body;
  res = client.remove("/v1/unclaimed/pvc-a");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409u) << res->body;
}
