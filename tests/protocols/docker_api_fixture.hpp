#pragma once

// The Docker plugin API (protocols/docker/docker_api.hpp) served on a real socket in front
// of the stand-in registry (fake_registry.hpp), and called as dockerd calls it.

#include <memory>
#include <string>

#include <caf/all.hpp>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "core/errors.hpp"
#include "protocols/docker/docker_api.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/fake_registry.hpp"
#include "tests/protocols/test_util.hpp"

namespace berth::test {

class docker_api_fixture : public ::testing::Test {
protected:
  test::temp_dir dir;
  std::string path = dir.path + "/plugins/berth.sock";
  /// Destroyed after the actor system, as in admin_fixture.hpp: a reply its actors still
  /// hold needs this io_context when it goes.
  test::io_threads io;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  registry_actor reg;
  std::unique_ptr<docker_api> api;
  std::unique_ptr<unix_http_server> srv;
  std::shared_ptr<telemetry> stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});

  void SetUp() override {
    cfg.add_message_types<caf::id_block::berth>();
    sys = std::make_unique<caf::actor_system>(cfg);
    reg = sys->spawn(test::fake_registry, std::string{"2026-01-02T03:04:05Z"});
    api = std::make_unique<docker_api>(*sys, reg, stats);
    srv = std::make_unique<unix_http_server>(
      io.io,
      [this](const std::string& method, const std::string& target, std::string body, reply_fn reply,
             const caller& from) {
        api->handle(method, target, std::move(body), std::move(reply), from);
      },
      4096, "docker");
    ASSERT_FALSE(srv->listen(path));
  }

  /// Serves the API with `routes` from now on (it starts without: always the registry).
  void use_routes(volume_routes routes) {
    api = std::make_unique<docker_api>(*sys, reg, stats, std::move(routes));
  }

  void TearDown() override {
    srv->stop();
    io.stop();
    caf::anon_send_exit(reg, caf::exit_reason::user_shutdown);
  }

  /// POSTs to /VolumeDriver.<endpoint> and expects HTTP 200.
  std::string call(const std::string& endpoint, const std::string& body) {
    unix_http_client client{path};
    auto res = client.post(endpoint[0] == '/' ? endpoint : "/VolumeDriver." + endpoint, body);
    EXPECT_TRUE(res) << describe(res.error());
    if (!res) {
      return {};
    }
    EXPECT_EQ(res->status, 200u) << res->body;
    return res->body;
  }
};

/// The Err of a plugin answer.
inline std::string err_of(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("Err")) {
    return "<no Err in " + body + ">";
  }
  return doc["Err"].GetString();
}

} // namespace berth::test
