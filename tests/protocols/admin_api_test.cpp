#include "protocols/admin/admin_api.hpp"

#include <caf/all.hpp>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/record_json.hpp"
#include "protocols/admin/berthctl_cli.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/fake_registry.hpp"
#include "tests/protocols/test_util.hpp"

using namespace berth;

namespace {

class admin_api_test : public ::testing::Test {
protected:
  test::temp_dir dir;
  std::string path = dir.path + "/admin.sock";
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  registry_actor reg;
  std::unique_ptr<admin_api> api;
  test::io_threads io;
  std::unique_ptr<unix_http_server> srv;

  void SetUp() override {
    cfg.add_message_types<caf::id_block::berth>();
    sys = std::make_unique<caf::actor_system>(cfg);
    reg = sys->spawn(test::fake_registry, std::string{"2026-01-02T03:04:05Z"});
    api = std::make_unique<admin_api>(*sys, reg);
    srv = std::make_unique<unix_http_server>(
      io.io,
      [this](const std::string& method, const std::string& target, std::string body,
             reply_fn reply, const caller&) { api->handle(method, target, std::move(body), std::move(reply)); },
      1 << 16, "admin");
    ASSERT_FALSE(srv->listen(path));
    caf::scoped_actor self{*sys};
    auto ok = [](atom::ok) {};
    auto fail = [](caf::error& err) { FAIL() << describe(err); };
    self->request(reg, caf::infinite, atom::create_v, std::string{"beta"},
                  option_map{{"type", "tmpfs"}})
      .receive(ok, fail);
    self->request(reg, caf::infinite, atom::create_v, std::string{"alpha"}, option_map{})
      .receive(ok, fail);
    self
      ->request(reg, caf::infinite, atom::mount_v, std::string{"alpha"},
                std::string{"0123456789abcdef0123"}, caller{})
      .receive([](std::string&) {}, fail);
  }

  void TearDown() override {
    srv->stop();
    io.stop();
    caf::anon_send_exit(reg, caf::exit_reason::user_shutdown);
  }

  /// Runs berthctl against the test socket.
  int ctl(std::vector<std::string> args, std::string& out, std::string& err) {
    args.insert(args.begin(), {"--socket", path});
    std::ostringstream o;
    std::ostringstream e;
    int rc = cli::run(args, o, e);
    out = o.str();
    err = e.str();
    return rc;
  }
};

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
  EXPECT_EQ(out, "NAME    OWNER    KIND     BACKEND   MOUNTED   MOUNT IDS        PATH\n"
                 "alpha   docker   volume   local     yes       0123456789ab:1   /mnt/berth/alpha\n"
                 "beta    docker   volume   local     no        -                -\n");
  ASSERT_EQ(ctl({"volumes", "--json"}, out, err), 0) << err;
  EXPECT_EQ(out.front(), '[');
}

TEST_F(admin_api_test, berthctl_inspect_prints_one_volume) {
  std::string out;
  std::string err;
  ASSERT_EQ(ctl({"inspect", "alpha"}, out, err), 0) << err;
  EXPECT_EQ(out, "name:        alpha\n"
                 "owner:       docker (the protocol that may use it)\n"
                 "kind:        volume\n"
                 "backend:     local\n"
                 "created at:  2026-01-02T03:04:05Z\n"
                 "options:     -\n"
                 "mounted:     yes\n"
                 "mountpoint:  /mnt/berth/alpha\n"
                 "mounts:      1\n"
                 "  0123456789abcdef0123: 1\n");
  ASSERT_EQ(ctl({"inspect", "beta", "--json"}, out, err), 0) << err;
  EXPECT_TRUE(record_from_json(out));
  EXPECT_EQ(ctl({"inspect", "gamma"}, out, err), 1);
  EXPECT_EQ(err, "berthctl: no volume named \"gamma\"\n");
}
