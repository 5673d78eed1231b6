// The node agent's unclaimed volumes: a CSI volume recorded here that no BerthVolume names
// is reported and kept, claimed again by a new object of its name, and removed only at an
// operator's request, once the API server confirms that no object names it.

#include <memory>

#include "core/errors.hpp"
#include "tests/protocols/kube/agent/node_agent_fixture.hpp"

namespace berth::test {
namespace {

class node_agent_unclaimed : public node_agent_test {
protected:
  /// Makes CSI volume `csi_name` through an object, then loses the object while no watch
  /// runs: the list that follows finds the volume unclaimed.
  void strand(const std::string& csi_name) {
    auto name = add_volume(csi_name, 8 * mib);
    ASSERT_TRUE(eventually([&] { return ready(name); }));
    api->erase_unseen(kube::berth_volumes().plural, name);
    api->expire_watches();
    ASSERT_TRUE(eventually([&] { return listed_unclaimed() == std::vector<std::string>{csi_name}; }))
      << "the list after the loss reports the volume";
  }

  std::vector<std::string> listed_unclaimed() {
    auto now = agent->unclaimed();
    return now ? now->names : std::vector<std::string>{};
  }

  caf::error remove(const std::string& csi_name) {
    return remove_unclaimed(csi_name);
  }
};

TEST_F(node_agent_unclaimed, a_volume_no_object_names_is_reported_and_kept) {
  strand("vol-u");
  EXPECT_EQ(stats->unclaimed_volumes.value(), 1);
  EXPECT_EQ(storage->removes.load(), 0) << "berth never removes an unclaimed volume by itself";
}

TEST_F(node_agent_unclaimed, an_operator_removes_it_once_no_object_names_it) {
  strand("vol-u");
  auto err = remove("vol-u");
  EXPECT_FALSE(err) << describe(err);
  EXPECT_EQ(storage->removes.load(), 1);
  EXPECT_TRUE(listed_unclaimed().empty());
  EXPECT_EQ(stats->unclaimed_volumes.value(), 0);
  err = remove("vol-u");
  EXPECT_TRUE(is(err, ec::not_found)) << describe(err);
}

TEST_F(node_agent_unclaimed, a_volume_an_object_names_is_refused_naming_the_object) {
  auto name = add_volume("vol-c", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(name); }));
  auto err = remove("vol-c");
  EXPECT_TRUE(is(err, ec::failed_precondition)) << describe(err);
  EXPECT_NE(describe(err).find("BerthVolume " + name), std::string::npos) << describe(err);
  EXPECT_EQ(storage->removes.load(), 0);
}

TEST_F(node_agent_unclaimed, an_api_server_that_cannot_confirm_removes_nothing) {
  strand("vol-u");
  api->set_hook([](const object_call& call) -> caf::error {
    if (call.verb == "get") {
      return make_error(ec::unavailable, "connection refused");
    }
    return {};
  });
  auto err = remove("vol-u");
  EXPECT_TRUE(is(err, ec::unavailable)) << describe(err);
  EXPECT_NE(describe(err).find("nothing was removed"), std::string::npos) << describe(err);
  EXPECT_EQ(storage->removes.load(), 0);
  EXPECT_EQ(listed_unclaimed(), std::vector<std::string>{"vol-u"});
}

TEST_F(node_agent_unclaimed, an_object_made_again_under_its_name_claims_it) {
  strand("vol-u");
  auto name = add_volume("vol-u", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(name); }));
  EXPECT_TRUE(listed_unclaimed().empty());
  EXPECT_EQ(stats->unclaimed_volumes.value(), 0);
  EXPECT_EQ(storage->creates.load(), 1) << "the object takes the volume up from its record";
}

} // namespace
} // namespace berth::test
