#pragma once

// The admin API on a test socket, in front of the fake registry, seeded with two
// Docker volumes (alpha, mounted by one ID; beta, with an option); and berthctl
// run against it.

#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <gtest/gtest.h>

#include "apps/berthctl/berthctl_cli.hpp"
#include "core/errors.hpp"
#include "protocols/admin/admin_api.hpp"
#include "tests/protocols/berthctl_runner.hpp"
#include "tests/protocols/fake_registry.hpp"
#include "tests/protocols/test_util.hpp"

namespace berth::test {

class admin_fixture : public ::testing::Test {
protected:
  test::temp_dir dir;
  std::string path = dir.path + "/admin.sock";
  /// Declared before the actor system, so destroyed after it: a reply the admin API's
  /// actors still hold (a copy in a response handler) holds its HTTP session, whose timer
  /// and socket need this io_context when they go (unix_http_server.hpp: the io_context
  /// must outlive every pending reply).
  test::io_threads io;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  /// What the fake registry's modify records and answers.
  std::shared_ptr<fake_modify> modifying = std::make_shared<fake_modify>();
  registry_actor reg;
  /// What the admin API reads for status and operations, and counts its requests in.
  std::shared_ptr<telemetry> stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  std::unique_ptr<admin_api> api;
  std::unique_ptr<unix_http_server> srv;

  void SetUp() override {
    cfg.add_message_types<caf::id_block::berth>();
    sys = std::make_unique<caf::actor_system>(cfg);
    reg = sys->spawn(fake_registry_with, std::string{"2026-01-02T03:04:05Z"}, modifying);
    api = std::make_unique<admin_api>(*sys, reg, stats);
    srv = std::make_unique<unix_http_server>(
      io.io,
      [this](const std::string& method, const std::string& target, std::string body,
             reply_fn reply, const caller&) {
        api->handle(method, target, std::move(body), std::move(reply));
      },
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
                std::string{"0123456789abcdef0123"}, std::string{}, caller{})
      .receive([](std::string&) {}, fail);
  }

  void TearDown() override {
    srv->stop();
    io.stop();
    caf::anon_send_exit(reg, caf::exit_reason::user_shutdown);
  }

  /// Runs berthctl against the test socket.
  int ctl(std::vector<std::string> args, std::string& out, std::string& err) {
    return run_berthctl(path, std::move(args), out, err);
  }
};

} // namespace berth::test
