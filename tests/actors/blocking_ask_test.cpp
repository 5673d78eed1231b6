#include "actors/blocking_ask.hpp"

#include <chrono>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <gtest/gtest.h>

namespace berth {
namespace {

/// An actor that doubles an int, refuses a string by name, and never answers a double.
caf::behavior peer(caf::event_based_actor* self) {
  return {
    [](int x) { return x * 2; },
    [](const std::string& name) -> caf::result<int> {
      return make_error(ec::not_found, "no volume " + name);
    },
    [self](double) -> caf::result<int> {
      return self->make_response_promise<int>(); // dropped unanswered: a wedged actor
    },
  };
}

class blocking_ask_test : public ::testing::Test {
protected:
  caf::actor_system_config cfg_;
  caf::actor_system sys_{cfg_};
  caf::actor peer_ = sys_.spawn(peer);

  ~blocking_ask_test() override {
    caf::anon_send_exit(peer_, caf::exit_reason::user_shutdown);
  }
};

TEST_F(blocking_ask_test, returns_the_answer) {
  auto got = blocking_ask<int>(sys_, peer_, caf::infinite, "the peer", 21);
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(*got, 42);
}

TEST_F(blocking_ask_test, returns_the_actors_error_as_it_was) {
  auto got =
    blocking_ask<int>(sys_, peer_, std::chrono::seconds(30), "the peer", std::string{"v1"});
  ASSERT_FALSE(got);
  EXPECT_EQ(berth_code(got.error()), ec::not_found);
  EXPECT_EQ(describe(got.error()), "no volume v1");
}

// The bound is the caller's: an actor that never answers becomes ec::timeout naming whom
// the thread waited for, not CAF's bare request_timeout.
TEST_F(blocking_ask_test, an_actor_that_does_not_answer_in_time_is_a_timeout_naming_it) {
  auto got = blocking_ask<int>(sys_, peer_, std::chrono::milliseconds(50), "volume v1", 1.0);
  ASSERT_FALSE(got);
  EXPECT_EQ(berth_code(got.error()), ec::timeout);
  EXPECT_NE(describe(got.error()).find("volume v1 did not answer within 50"), std::string::npos)
    << describe(got.error());
}

} // namespace
} // namespace berth
