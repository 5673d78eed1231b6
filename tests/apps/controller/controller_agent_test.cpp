// berthd controller's RPCs and a node agent over one API held in memory: what each RPC
// answers from the object's status that the agent writes.

#include "core/errors.hpp"
#include "tests/apps/controller/controller_fixture.hpp"

namespace berth::test {
namespace {

TEST_F(controller_agent_test, a_delete_after_a_failed_one_answers_its_own_attempt) {
  auto name = add_volume("vol-g", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(name); }));
  storage->fail_remove = true;
  auto first = delete_volume("vol-g");
  EXPECT_FALSE(first.ok());
  EXPECT_NE(first.error_message().find("injected"), std::string::npos) << first.error_message();
  ASSERT_TRUE(volume(name));
  // What held the removal back is gone: the next DeleteVolume succeeds, and is not answered
  // with the failure of the one before.
  storage->fail_remove = false;
  auto second = delete_volume("vol-g");
  EXPECT_TRUE(second.ok()) << second.error_message();
  EXPECT_FALSE(volume(name));
}

TEST_F(controller_agent_test, a_watch_the_api_refuses_ends_the_wait_with_its_error) {
  auto name = add_volume("vol-h", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(name); }));
  api->set_hook([](const object_call& call) {
    if (call.verb == "watch" && call.name.empty() && call.body.size() > 0) {
      return make_error(ec::failed_precondition, "403 Forbidden: cannot watch berthvolumes");
    }
    return caf::error{};
  });
  auto got = store->wait(name, [](const kube::volume_object&) { return false; },
                        std::chrono::steady_clock::now() + 3s);
  ASSERT_FALSE(got);
  EXPECT_TRUE(is(got.error(), ec::failed_precondition)) << describe(got.error());
}

} // namespace
} // namespace berth::test
