// berthd controller's snapshot RPCs and a node agent over one API held in memory: a
// snapshot is cut on its volume's node, answered from the BerthSnapshot's status, and
// removed before its object goes.

#include "core/errors.hpp"
#include "protocols/kube/agent/volume_desk.hpp"
#include "protocols/kube/snapshot_objects.hpp"
#include "tests/apps/controller/controller_fixture.hpp"

namespace berth::test {
namespace {

class controller_snapshot_test : public controller_agent_test {
protected:
  grpc::Status create_snapshot(const std::string& name, const std::string& source,
                               controller::v1::CreateSnapshotResponse* resp = nullptr) {
    grpc::ServerContext ctx;
    controller::v1::CreateSnapshotRequest req;
    req.set_name(name);
    req.set_source_volume_id(source);
    controller::v1::CreateSnapshotResponse ignored;
    return rpc->CreateSnapshot(&ctx, &req, resp ? resp : &ignored);
  }

  grpc::Status delete_snapshot(const std::string& id) {
    grpc::ServerContext ctx;
    controller::v1::DeleteSnapshotRequest req;
    req.set_snapshot_id(id);
    controller::v1::DeleteSnapshotResponse resp;
    return rpc->DeleteSnapshot(&ctx, &req, &resp);
  }

  controller::v1::ListSnapshotsResponse list_snapshots(const std::string& source) {
    grpc::ServerContext ctx;
    controller::v1::ListSnapshotsRequest req;
    req.set_source_volume_id(source);
    controller::v1::ListSnapshotsResponse resp;
    auto st = rpc->ListSnapshots(&ctx, &req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp;
  }

  grpc::Status get_snapshot(const std::string& id, controller::v1::GetSnapshotResponse* resp) {
    grpc::ServerContext ctx;
    controller::v1::GetSnapshotRequest req;
    req.set_snapshot_id(id);
    return rpc->GetSnapshot(&ctx, &req, resp);
  }

  std::optional<kube::snapshot_object> snapshot_object(const std::string& name) {
    auto json = api->object(kube::berth_snapshots().plural, name);
    if (!json) {
      return std::nullopt;
    }
    auto obj = kube::parse_snapshot_object(*json);
    return obj ? std::optional<kube::snapshot_object>{std::move(*obj)} : std::nullopt;
  }

  /// Whether node n1's registry holds the CSI snapshot `name`.
  bool recorded(const std::string& name) {
    kube::agent::volume_desk desk{*ts.sys, reg};
    auto rec = desk.get_snapshot(name);
    return rec && *rec;
  }
};

TEST_F(controller_snapshot_test, a_snapshot_is_cut_on_its_volumes_node_and_answered_from_its_status) {
  auto volume = add_volume("vol-s", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(volume); }));
  controller::v1::CreateSnapshotResponse resp;
  auto st = create_snapshot("snap-s", "vol-s", &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(resp.snapshot().snapshot_id(), "snap-s");
  EXPECT_EQ(resp.snapshot().source_volume_id(), "vol-s");
  EXPECT_EQ(resp.snapshot().size_bytes(), static_cast<int64_t>(8 * mib));
  EXPECT_TRUE(resp.snapshot().ready_to_use());
  EXPECT_GT(resp.snapshot().creation_time().seconds(), 0);
  auto obj = snapshot_object("snap-s");
  ASSERT_TRUE(obj);
  EXPECT_EQ(obj->spec.node, "n1");
  EXPECT_EQ(obj->spec.parameters.at("backend"), "local");
  EXPECT_EQ(obj->finalizers, std::vector<std::string>{kube::storage_finalizer});
  EXPECT_TRUE(recorded("snap-s"));
  // A retry answers the same snapshot; the same name of another volume is refused.
  controller::v1::CreateSnapshotResponse again;
  st = create_snapshot("snap-s", "vol-s", &again);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(again.snapshot().creation_time().seconds(), resp.snapshot().creation_time().seconds());
  add_volume("vol-t", 8 * mib);
  st = create_snapshot("snap-s", "vol-t");
  EXPECT_EQ(st.error_code(), grpc::StatusCode::ALREADY_EXISTS) << st.error_message();
  EXPECT_NE(st.error_message().find("vol-s"), std::string::npos) << st.error_message();
  // ListSnapshots by source.
  auto listed = list_snapshots("vol-s");
  ASSERT_EQ(listed.entries_size(), 1);
  EXPECT_EQ(listed.entries(0).snapshot().snapshot_id(), "snap-s");
  EXPECT_EQ(list_snapshots("vol-t").entries_size(), 0);
  // GetSnapshot (CSI 1.12) answers it from the same status; NOT_FOUND for none.
  controller::v1::GetSnapshotResponse got;
  st = get_snapshot("snap-s", &got);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(got.snapshot().source_volume_id(), "vol-s");
  EXPECT_TRUE(got.snapshot().ready_to_use());
  EXPECT_EQ(got.snapshot().creation_time().seconds(), resp.snapshot().creation_time().seconds());
  st = get_snapshot("snap-none", &got);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << st.error_message();
  st = get_snapshot("", &got);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
}

TEST_F(controller_snapshot_test, a_deleted_snapshot_is_removed_on_its_node_before_its_object_goes) {
  auto volume = add_volume("vol-d", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(volume); }));
  ASSERT_TRUE(create_snapshot("snap-d", "vol-d").ok());
  ASSERT_TRUE(recorded("snap-d"));
  auto st = delete_snapshot("snap-d");
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_FALSE(snapshot_object("snap-d"));
  EXPECT_FALSE(recorded("snap-d"));
  st = delete_snapshot("snap-d"); // gone already
  EXPECT_TRUE(st.ok()) << st.error_message();
}

TEST_F(controller_snapshot_test, a_removal_the_node_refuses_is_the_answer_and_the_object_stays) {
  auto volume = add_volume("vol-r", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(volume); }));
  ASSERT_TRUE(create_snapshot("snap-r", "vol-r").ok());
  storage->fail_remove = true;
  auto st = delete_snapshot("snap-r");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.error_message().find("injected"), std::string::npos) << st.error_message();
  EXPECT_TRUE(snapshot_object("snap-r"));
  EXPECT_TRUE(recorded("snap-r"));
  // Being deleted, it no longer exists for GetSnapshot, as for ListSnapshots.
  ASSERT_TRUE(snapshot_object("snap-r")->deleting);
  controller::v1::GetSnapshotResponse got;
  EXPECT_EQ(get_snapshot("snap-r", &got).error_code(), grpc::StatusCode::NOT_FOUND);
  storage->fail_remove = false;
  st = delete_snapshot("snap-r");
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_FALSE(snapshot_object("snap-r"));
}

TEST_F(controller_snapshot_test, a_snapshot_of_no_volume_is_refused_and_makes_no_object) {
  auto st = create_snapshot("snap-n", "vol-none");
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << st.error_message();
  EXPECT_NE(st.error_message().find("vol-none"), std::string::npos) << st.error_message();
  EXPECT_FALSE(snapshot_object("snap-n"));
}

TEST_F(controller_snapshot_test, a_snapshot_the_node_cannot_cut_is_its_error_and_its_object_goes) {
  auto volume = add_volume("vol-f", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(volume); }));
  storage->copies = false; // the backend refuses every content copy
  auto st = create_snapshot("snap-f", "vol-f");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.error_message().find("node \"n1\""), std::string::npos) << st.error_message();
  EXPECT_TRUE(eventually([&] { return !snapshot_object("snap-f"); }));
  EXPECT_FALSE(recorded("snap-f"));
}

TEST_F(controller_snapshot_test, a_snapshot_of_a_node_gone_for_good_is_forgotten_with_an_event) {
  auto volume = add_volume("vol-g", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(volume); }));
  ASSERT_TRUE(create_snapshot("snap-g", "vol-g").ok());
  // The Node is deleted; its berthd (the agent here) can no longer remove anything, so
  // only the controller can let the object go.
  storage->fail_remove = true;
  ASSERT_TRUE(api->delete_object(kube::nodes(), "n1", far()));
  auto st = delete_snapshot("snap-g");
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_FALSE(snapshot_object("snap-g"));
  EXPECT_TRUE(recorded("snap-g")); // nothing on the node was touched by the controller
  auto events = api->list_objects(kube::events(kube::cluster_events_namespace), {}, far());
  ASSERT_TRUE(events);
  ASSERT_EQ(events->items.size(), 1u);
  EXPECT_NE(events->items[0].find("\"kind\":\"BerthSnapshot\""), std::string::npos) << events->items[0];
  EXPECT_NE(events->items[0].find("NodeGone"), std::string::npos) << events->items[0];
}

TEST_F(controller_snapshot_test, a_volume_from_a_snapshot_needs_it_ready_and_goes_to_its_node) {
  grpc::ServerContext ctx;
  controller::v1::CreateVolumeRequest req;
  req.set_name("vol-from");
  req.mutable_capacity_range()->set_required_bytes(8 * mib);
  auto* cap = req.add_volume_capabilities();
  cap->mutable_mount();
  cap->mutable_access_mode()->set_mode(controller::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id("snap-none");
  controller::v1::CreateVolumeResponse resp;
  auto st = rpc->CreateVolume(&ctx, &req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << st.error_message();
  EXPECT_NE(st.error_message().find("snap-none"), std::string::npos) << st.error_message();
  EXPECT_FALSE(volume(kube::object_name_for("vol-from")));
}

TEST_F(controller_snapshot_test, a_ready_snapshot_whose_record_is_gone_is_reported_lost_not_cut_again) {
  auto volume = add_volume("vol-l", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(volume); }));
  ASSERT_TRUE(create_snapshot("snap-l", "vol-l").ok());
  // The record goes behind the agent's back (a state directory replaced, say); a new copy of
  // the volume as it is now would not be the snapshot the status promised.
  kube::agent::volume_desk desk{*ts.sys, reg};
  ASSERT_FALSE(desk.remove_snapshot("snap-l"));
  ASSERT_TRUE(api->merge_patch(kube::berth_snapshots(), "snap-l", "",
                               R"({"metadata":{"annotations":{"touched":"1"}}})", far()));
  ASSERT_TRUE(eventually([&] {
    auto obj = snapshot_object("snap-l");
    return obj && obj->status.phase == kube::phase_failed;
  }));
  auto obj = snapshot_object("snap-l");
  EXPECT_EQ(obj->status.reason, "not_found");
  EXPECT_FALSE(obj->status.ready_to_use);
  EXPECT_NE(obj->status.message.find("lost"), std::string::npos) << obj->status.message;
  EXPECT_FALSE(recorded("snap-l"));
  EXPECT_EQ(list_snapshots("vol-l").entries_size(), 0); // a failed snapshot is not listed
  // A restore from it is refused for good, with the node's reason, not "retry".
  grpc::ServerContext ctx;
  controller::v1::CreateVolumeRequest req;
  req.set_name("vol-from-lost");
  req.mutable_capacity_range()->set_required_bytes(8 * mib);
  auto* cap = req.add_volume_capabilities();
  cap->mutable_mount();
  cap->mutable_access_mode()->set_mode(controller::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id("snap-l");
  controller::v1::CreateVolumeResponse made;
  auto restore = rpc->CreateVolume(&ctx, &req, &made);
  EXPECT_EQ(restore.error_code(), grpc::StatusCode::NOT_FOUND) << restore.error_message();
  EXPECT_NE(restore.error_message().find("lost"), std::string::npos) << restore.error_message();
  // It can still be deleted.
  auto st = delete_snapshot("snap-l");
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_FALSE(snapshot_object("snap-l"));
}

} // namespace
} // namespace berth::test
