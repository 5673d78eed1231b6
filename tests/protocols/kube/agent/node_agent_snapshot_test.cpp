// The node agent's BerthSnapshots, over an API in memory and a real registry on the fake
// backend: an object of this node is cut and answered, and its deletion removes the
// snapshot before the finalizer goes. (The controller's side: tests/apps/controller.)

#include "protocols/kube/agent/snapshot_intent.hpp"
#include "protocols/kube/agent/volume_desk.hpp"
#include "protocols/kube/snapshot_objects.hpp"
#include "tests/protocols/kube/agent/node_agent_fixture.hpp"

namespace berth::test {
namespace {

class node_agent_snapshot : public node_agent_test {
protected:
  /// Writes the BerthSnapshot of `csi_name` of the volume `source` on `on_node`, as the
  /// controller does.
  void add_snapshot(const std::string& csi_name, const std::string& source,
                    const std::string& on_node = node) {
    kube::snapshot_object_spec spec;
    spec.csi_name = csi_name;
    spec.source_volume = source;
    spec.node = on_node;
    auto made = api->create_object(kube::berth_snapshots(),
                                   kube::snapshot_object_json(kube::object_name_for(csi_name), spec),
                                   far());
    ASSERT_TRUE(made) << describe(made.error());
  }

  std::optional<kube::snapshot_object> snapshot(const std::string& name) {
    auto json = api->object(kube::berth_snapshots().plural, name);
    if (!json) {
      return std::nullopt;
    }
    auto obj = kube::parse_snapshot_object(*json);
    return obj ? std::optional<kube::snapshot_object>{std::move(*obj)} : std::nullopt;
  }

  bool recorded(const std::string& name) {
    kube::agent::volume_desk desk{*ts.sys, reg};
    auto rec = desk.get_snapshot(name);
    return rec && *rec;
  }
};

TEST_F(node_agent_snapshot, a_snapshot_of_this_node_is_cut_and_reported_ready) {
  auto volume = add_volume("vol-a", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(volume); }));
  add_snapshot("snap-a", "vol-a");
  ASSERT_TRUE(eventually([&] {
    auto obj = snapshot("snap-a");
    return obj && obj->status.phase == kube::phase_ready;
  }));
  auto obj = snapshot("snap-a");
  EXPECT_TRUE(obj->status.ready_to_use);
  EXPECT_EQ(obj->status.size_bytes, 8 * mib);
  EXPECT_FALSE(obj->status.creation_time.empty());
  EXPECT_EQ(obj->status.observed_generation, obj->generation);
  EXPECT_TRUE(recorded("snap-a"));
}

TEST_F(node_agent_snapshot, a_snapshot_of_another_node_or_of_no_volume_is_not_cut_here) {
  auto volume = add_volume("vol-b", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(volume); }));
  add_snapshot("snap-elsewhere", "vol-b", "n2");
  add_snapshot("snap-of-nothing", "vol-none");
  ASSERT_TRUE(eventually([&] {
    auto obj = snapshot("snap-of-nothing");
    return obj && obj->status.phase == kube::phase_failed;
  }));
  EXPECT_EQ(snapshot("snap-of-nothing")->status.reason, "not_found");
  EXPECT_FALSE(recorded("snap-of-nothing"));
  EXPECT_TRUE(snapshot("snap-elsewhere")->status.phase.empty()); // n2's to answer
  EXPECT_FALSE(recorded("snap-elsewhere"));
}

TEST_F(node_agent_snapshot, a_snapshot_of_that_name_taken_of_another_volume_is_not_reported_ready) {
  auto first = add_volume("vol-1", 8 * mib);
  auto second = add_volume("vol-2", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(first) && ready(second); }));
  // Taken of vol-1 (under an object since gone); an object now asks the name of vol-2.
  kube::snapshot_object_spec of_first;
  of_first.csi_name = "snap-reused";
  of_first.source_volume = "vol-1";
  kube::agent::volume_desk desk{*ts.sys, reg};
  ASSERT_TRUE(desk.create("snap-reused", kube::agent::snapshot_request(of_first, "local")));
  add_snapshot("snap-reused", "vol-2");
  ASSERT_TRUE(eventually([&] {
    auto obj = snapshot("snap-reused");
    return obj && !obj->status.phase.empty();
  }));
  auto obj = snapshot("snap-reused");
  EXPECT_EQ(obj->status.phase, kube::phase_failed);
  EXPECT_FALSE(obj->status.ready_to_use);
  EXPECT_EQ(obj->status.reason, "already_exists");
  EXPECT_NE(obj->status.message.find("vol-1"), std::string::npos) << obj->status.message;
  EXPECT_TRUE(recorded("snap-reused")) << "vol-1's snapshot is kept";
  // The controller deletes a failed object; the snapshot it never had stays.
  ASSERT_TRUE(api->delete_object(kube::berth_snapshots(), "snap-reused", far()));
  ASSERT_TRUE(eventually([&] { return !snapshot("snap-reused"); }));
  EXPECT_TRUE(recorded("snap-reused")) << "vol-1's snapshot outlives the object that was not its";
}

TEST_F(node_agent_snapshot, a_deleted_snapshot_is_removed_before_its_finalizer_goes) {
  auto volume = add_volume("vol-c", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(volume); }));
  add_snapshot("snap-c", "vol-c");
  ASSERT_TRUE(eventually([&] { return recorded("snap-c"); }));
  storage->fail_remove = true;
  ASSERT_TRUE(api->delete_object(kube::berth_snapshots(), "snap-c", far()));
  ASSERT_TRUE(eventually([&] {
    auto obj = snapshot("snap-c");
    return obj && obj->status.phase == kube::phase_deleting;
  }));
  EXPECT_TRUE(recorded("snap-c")); // held by its finalizer while the removal fails
  storage->fail_remove = false;
  ASSERT_TRUE(api->merge_patch(kube::berth_snapshots(), "snap-c", "",
                               R"({"metadata":{"annotations":{"retry":"1"}}})", far()));
  ASSERT_TRUE(eventually([&] { return !snapshot("snap-c"); }));
  EXPECT_FALSE(recorded("snap-c"));
}

TEST_F(node_agent_snapshot, a_snapshot_no_object_names_is_reported_kept_and_removed_on_request) {
  auto volume = add_volume("vol-u", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(volume); }));
  add_snapshot("snap-u", "vol-u");
  add_snapshot("snap-kept", "vol-u");
  ASSERT_TRUE(eventually([&] { return recorded("snap-u") && recorded("snap-kept"); }));
  // snap-u's object is lost while no watch runs; the list after finds its snapshot unclaimed.
  api->erase_unseen(kube::berth_snapshots().plural, "snap-u");
  api->expire_watches();
  auto unclaimed_snapshots = [&] {
    auto now = agent->unclaimed();
    return now ? now->snapshots : std::vector<std::string>{};
  };
  ASSERT_TRUE(eventually([&] { return unclaimed_snapshots() == std::vector<std::string>{"snap-u"}; }));
  EXPECT_EQ(stats->unclaimed_volumes.value(), 1);
  EXPECT_TRUE(recorded("snap-u")) << "berth never removes an unclaimed snapshot by itself";
  // One an object names is refused, naming the object.
  auto err = remove_unclaimed("snap-kept");
  EXPECT_TRUE(is(err, ec::failed_precondition)) << describe(err);
  EXPECT_NE(describe(err).find("BerthSnapshot snap-kept"), std::string::npos) << describe(err);
  EXPECT_TRUE(recorded("snap-kept"));
  // The unclaimed one goes at the operator's request.
  err = remove_unclaimed("snap-u");
  EXPECT_FALSE(err) << describe(err);
  EXPECT_FALSE(recorded("snap-u"));
  EXPECT_TRUE(unclaimed_snapshots().empty());
  EXPECT_EQ(stats->unclaimed_volumes.value(), 0);
  err = remove_unclaimed("snap-u");
  EXPECT_TRUE(is(err, ec::not_found)) << describe(err);
}

} // namespace
} // namespace berth::test
