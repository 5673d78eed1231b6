// The admin API's release route (POST /v1/volumes/NAME/release) and `berthctl release`, in
// front of a fake operator_release_desk: what reaches the desk, what is refused before it,
// and how its answers and errors become HTTP and berthctl's lines.

#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/admin_fixture.hpp"

using namespace berth;

namespace {

const std::string long_id = "e3306d89c961aaaabbbbccccddddeeeeffff0000111122223333444455556666";

/// Answers each release with what the test set, recording what it was asked.
struct fake_desk : operator_release_desk {
  std::mutex mutex;
  std::vector<std::pair<std::string, std::string>> asked;
  caf::expected<operator_release_result> answer{operator_release_result{}};

  void release(std::string volume, std::string id, done_fn done) override {
    caf::expected<operator_release_result> res{operator_release_result{}};
    {
      std::lock_guard<std::mutex> lock{mutex};
      asked.emplace_back(volume, id);
      res = answer;
    }
    // From another thread, as the reconciliation's worker answers.
    std::thread{[done, res]() mutable { done(std::move(res)); }}.detach();
  }
};

class admin_release_test : public test::admin_fixture {
protected:
  std::shared_ptr<fake_desk> desk = std::make_shared<fake_desk>();

  void SetUp() override {
    admin_fixture::SetUp();
    api = std::make_unique<admin_api>(*sys, reg, stats, desk);
  }

  caf::expected<http_response> post(const std::string& target, const std::string& body) {
    unix_http_client client{path};
    return client.post(target, body, "application/json");
  }

  rapidjson::Document json(const std::string& body) {
    rapidjson::Document doc;
    doc.Parse(body.c_str());
    return doc;
  }
};

} // namespace

TEST_F(admin_release_test, release_asks_the_desk_and_answers_what_it_dropped) {
  desk->answer = operator_release_result{2, true, ""};
  auto res = post("/v1/volumes/alpha/release", R"({"id": ")" + long_id + R"("})");
  ASSERT_TRUE(res) << describe(res.error());
  ASSERT_EQ(res->status, 200u) << res->body;
  auto doc = json(res->body);
  ASSERT_TRUE(doc.IsObject()) << res->body;
  EXPECT_STREQ(doc["volume"].GetString(), "alpha");
  EXPECT_EQ(doc["id"].GetString(), long_id);
  EXPECT_EQ(doc["dropped"].GetUint(), 2u);
  EXPECT_TRUE(doc["checked"].GetBool());
  EXPECT_STREQ(doc["unchecked_why"].GetString(), "");
  ASSERT_EQ(desk->asked.size(), 1u);
  EXPECT_EQ(desk->asked[0], std::make_pair(std::string{"alpha"}, long_id));
  // Counted as the admin route "release" (an operation name of its own, not "other").
  uint64_t ok = 0;
  for (const auto& row : stats->operations.snapshot()) {
    if (row.key == label_pair{"admin", "release"}) {
      for (const auto& [code, n] : row.codes) {
        ok += code == "ok" ? n : 0;
      }
    }
  }
  EXPECT_EQ(ok, 1u);
}

TEST_F(admin_release_test, the_desks_errors_become_404_and_409) {
  desk->answer = make_error(ec::not_found, "volume alpha counts no mount ID x");
  auto res = post("/v1/volumes/alpha/release", R"({"id": "x"})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404u) << res->body;
  EXPECT_NE(res->body.find("counts no mount ID x"), std::string::npos) << res->body;
  desk->answer = make_error(ec::in_use, "mount ID x of volume alpha belongs to container c1, "
                                        "which is running: stop the container instead");
  res = post("/v1/volumes/alpha/release", R"({"id": "x"})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409u) << res->body;
  EXPECT_NE(res->body.find("which is running"), std::string::npos) << res->body;
}

TEST_F(admin_release_test, a_bad_body_is_400_naming_the_field_and_never_reaches_the_desk) {
  for (const std::string& body :
       {std::string{""}, std::string{"{}"}, std::string{R"({"id": 7})"}, std::string{R"({"id": ""})"},
        std::string{R"({"id": "x", "force": true})"},
        R"({"id": ")" + std::string(limits::max_mount_id_bytes + 1, 'a') + R"("})"}) {
    auto res = post("/v1/volumes/alpha/release", body);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400u) << body << " -> " << res->body;
    auto doc = json(res->body);
    ASSERT_TRUE(doc.IsObject() && doc.HasMember("error")) << res->body;
  }
  auto res = post("/v1/volumes/alpha/release", R"({"id": 7})");
  EXPECT_NE(res->body.find("\\\"id\\\" must be a string"), std::string::npos) << res->body;
  res = post("/v1/volumes/bad%2Fname!/release", R"({"id": "x"})");
  EXPECT_EQ(res->status, 400u) << res->body;
  unix_http_client client{path};
  auto get = client.get("/v1/volumes/alpha/release");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405u);
  EXPECT_TRUE(desk->asked.empty());
}

TEST_F(admin_release_test, without_a_desk_release_is_unavailable) {
  api = std::make_unique<admin_api>(*sys, reg, stats);
  auto res = post("/v1/volumes/alpha/release", R"({"id": "x"})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503u) << res->body;
}

TEST_F(admin_release_test, berthctl_release_prints_what_was_dropped) {
  desk->answer = operator_release_result{1, true, ""};
  std::string out, err;
  ASSERT_EQ(ctl({"release", "alpha", long_id}, out, err), cli::exit_ok) << err;
  EXPECT_EQ(out, "released mount ID e3306d89c961… of volume alpha (count 1 dropped)\n");
  ASSERT_EQ(desk->asked.size(), 1u);
  EXPECT_EQ(desk->asked[0].second, long_id);
}

TEST_F(admin_release_test, berthctl_release_says_when_it_was_not_checked) {
  desk->answer = operator_release_result{3, false, "Docker API unix:///var/run/docker.sock: "
                                                   "connect: No such file or directory"};
  std::string out, err;
  ASSERT_EQ(ctl({"release", "alpha", "short"}, out, err), cli::exit_ok) << err;
  EXPECT_EQ(out, "released mount ID short of volume alpha (count 3 dropped)\n"
                 "(not checked against dockerd: Docker API unix:///var/run/docker.sock: connect: "
                 "No such file or directory)\n");
  ASSERT_EQ(ctl({"release", "alpha", "short", "--json"}, out, err), cli::exit_ok) << err;
  auto doc = json(out);
  ASSERT_TRUE(doc.IsObject()) << out;
  EXPECT_FALSE(doc["checked"].GetBool());
  EXPECT_EQ(doc["dropped"].GetUint(), 3u);
}

TEST_F(admin_release_test, berthctl_release_refused_prints_berthds_reason) {
  desk->answer = make_error(ec::in_use, "mount ID x of volume alpha belongs to container c1, "
                                        "which is running: stop the container instead");
  std::string out, err;
  EXPECT_EQ(ctl({"release", "alpha", "x"}, out, err), cli::exit_failure);
  EXPECT_NE(err.find("which is running: stop the container instead"), std::string::npos) << err;
  EXPECT_EQ(out, "");
}

TEST_F(admin_release_test, berthctl_release_needs_a_name_and_one_id) {
  std::string out, err;
  EXPECT_EQ(ctl({"release", "alpha"}, out, err), cli::exit_usage);
  EXPECT_NE(err.find("release needs a volume name and a mount ID"), std::string::npos) << err;
  EXPECT_EQ(ctl({"release", "alpha", "a", "b"}, out, err), cli::exit_usage);
  EXPECT_TRUE(desk->asked.empty());
  auto opts = cli::parse_args({"release", "alpha", "abc"});
  ASSERT_TRUE(opts);
  EXPECT_EQ(opts->cmd, cli::command::release);
  EXPECT_EQ(opts->name, "alpha");
  EXPECT_EQ(opts->mount_id, "abc");
  EXPECT_NE(cli::usage().find("release NAME MOUNT_ID"), std::string::npos);
}
