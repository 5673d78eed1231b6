// A Docker plugin request whose reply is lost (its answer destroyed without being
// called; the HTTP layer then answers 500) is counted by endpoint and logged with the
// request it belonged to.

#include "protocols/docker/docker_api.hpp"

#include <chrono>
#include <future>
#include <thread>

#include <caf/all.hpp>
#include <gtest/gtest.h>

#include "tests/support/captured_log.hpp"

using namespace berth;

namespace {

struct silent_state {
  static inline const char* name = "silent_registry";
  std::vector<caf::response_promise> held; ///< never delivered
};

/// A registry that takes every request and answers none of them. It takes an unused
/// argument, and is spawned with one: CAF 0.17 dereferences a null argument tuple when a
/// function actor is spawned without arguments (UBSan reports it).
caf::behavior silent_registry(caf::stateful_actor<silent_state>* self, int) {
  self->set_default_handler([self](caf::scheduled_actor*,
                                   caf::message_view&) -> caf::result<caf::message> {
    self->state.held.push_back(self->make_response_promise());
    return caf::delegated<caf::message>{};
  });
  return {[](int) {}};
}

TEST(docker_lost_reply, a_reply_destroyed_unanswered_is_counted_and_logged) {
  test_support::captured_log log;
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::berth>();
  caf::actor_system sys{cfg};
  auto silent = sys.spawn(silent_registry, 0);
  auto stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  auto api = std::make_unique<docker_api>(sys, caf::actor_cast<registry_actor>(silent), stats);
  std::atomic<int> answered{0};
  api->handle("POST", "/VolumeDriver.Mount", R"({"Name":"v1","ID":"c89a0123456789"})",
              [&](unsigned, std::string, std::string) { ++answered; }, caller{});
  api->handle(
    "POST", "/VolumeDriver.Get", R"({"Name":"v2"})",
    [&](unsigned, std::string, std::string) { ++answered; }, caller{});
  // The gateway goes with the API: its pending requests, and their answers, are dropped.
  api.reset();
  // Wait for the count itself (the gateway's actor ends on its own thread).
  for (int i = 0; i < 30000 && stats->docker_replies_lost.value("get") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(answered.load(), 0);
  EXPECT_EQ(stats->docker_replies_lost.value("mount"), 1u);
  EXPECT_EQ(stats->docker_replies_lost.value("get"), 1u);
  EXPECT_EQ(stats->docker_replies_lost.value("create"), 0u);
  EXPECT_EQ(log.count("Mount of volume v1 lost its reply"), 1) << log.out.str();
  EXPECT_EQ(log.count("Get of volume v2 lost its reply"), 1) << log.out.str();
  caf::anon_send_exit(silent, caf::exit_reason::user_shutdown);
}

// A Remove goes straight to the registry with its answer in the message (docs/design.md,
// "Three hops"): a registry that drops it unanswered, as one that has quit does, answers
// it through the message's destruction, so nothing is lost.
TEST(docker_lost_reply, a_remove_the_registry_drops_is_answered_that_berthd_is_stopping) {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::berth>();
  caf::actor_system sys{cfg};
  auto silent = sys.spawn(silent_registry, 0);
  auto stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  docker_api api{sys, caf::actor_cast<registry_actor>(silent), stats};
  std::promise<std::string> answer;
  auto body = answer.get_future();
  api.handle(
    "POST", "/VolumeDriver.Remove", R"({"Name":"v2"})",
    [&](unsigned, std::string, std::string b) { answer.set_value(std::move(b)); }, caller{});
  ASSERT_EQ(body.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_NE(body.get().find("berthd is stopping"), std::string::npos);
  EXPECT_EQ(stats->docker_replies_lost.value("remove"), 0u);
  caf::anon_send_exit(silent, caf::exit_reason::user_shutdown);
}

TEST(docker_lost_reply, an_answered_request_is_not_lost) {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::berth>();
  caf::actor_system sys{cfg};
  auto stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  docker_api api{sys, registry_actor{}, stats};
  int answered = 0;
  api.handle("POST", "/Plugin.Activate", "", [&](unsigned, std::string, std::string) {
    ++answered;
  }, caller{});
  EXPECT_EQ(answered, 1);
  for (const auto& [key, n] : stats->docker_replies_lost.snapshot()) {
    EXPECT_EQ(n, 0u) << key;
  }
}

} // namespace
