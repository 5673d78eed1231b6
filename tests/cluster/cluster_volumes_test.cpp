// The cluster mode end to end: `berthd controller` places and answers, each node's agent
// carries its BerthVolumes out, and the objects say what happened.

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/cluster/cluster_fixture.hpp"

namespace berth::cluster_test {

namespace {

std::string node_of(const v1::Volume& vol) {
  for (const auto& t : vol.accessible_topology()) {
    auto it = t.segments().find("topology.berth.csi.dev/node");
    if (it != t.segments().end()) {
      return it->second;
    }
  }
  return {};
}

/// The loop devices backed by a file under `dir`, as `losetup --list` names them ("" when none).
std::string loop_devices_of(const std::string& dir) {
  std::string out;
  FILE* p = ::popen("losetup --list --noheadings --output NAME,BACK-FILE 2>/dev/null", "r");
  if (!p) {
    return "cannot run losetup";
  }
  char line[1024];
  while (std::fgets(line, sizeof line, p)) {
    if (std::string{line}.find(dir) != std::string::npos) {
      out += line;
    }
  }
  ::pclose(p);
  return out;
}

} // namespace

TEST_F(cluster, nodes_report_capacity_and_the_controller_answers_per_node) {
  ASSERT_TRUE(eventually([] {
    for (const char* n : {"n1", "n2"}) {
      auto json = api().get_object(kube::nodes(), n, std::chrono::steady_clock::now() + std::chrono::seconds(5));
      auto cap = json ? kube::parse_node_capacity(*json) : caf::expected<std::map<std::string, uint64_t>>{caf::error{}};
      if (!cap || cap->count("block") == 0 || cap->at("block") == 0) {
        return false;
      }
    }
    return true;
  })) << logs();
  v1::GetCapacityRequest req;
  (*req.mutable_accessible_topology()->mutable_segments())["topology.berth.csi.dev/node"] = "n2";
  v1::GetCapacityResponse resp;
  auto st = controller().GetCapacity(call().get(), req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_GT(resp.available_capacity(), 0);
  (*req.mutable_accessible_topology()->mutable_segments())["topology.berth.csi.dev/node"] = "nowhere";
  st = controller().GetCapacity(call().get(), req, &resp);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(resp.available_capacity(), 0);
}

TEST_F(cluster, a_volume_goes_where_the_topology_asks_and_is_staged_there) {
  auto req = create_request("cl-placed", 64 * mib, "n2");
  v1::CreateVolumeResponse resp;
  auto st = controller().CreateVolume(call().get(), req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  EXPECT_EQ(resp.volume().volume_id(), "cl-placed");
  EXPECT_EQ(node_of(resp.volume()), "n2");
  EXPECT_GE(resp.volume().capacity_bytes(), 64 * mib);
  auto obj = object_of("cl-placed");
  ASSERT_TRUE(obj);
  EXPECT_EQ(obj->spec.node, "n2");
  EXPECT_EQ(obj->status.phase, "Ready");
  EXPECT_EQ(obj->status.observed_generation, obj->generation);

  // A retry finds the same object; another capacity under the name is refused.
  v1::CreateVolumeResponse again;
  st = controller().CreateVolume(call().get(), req, &again);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(again.volume().capacity_bytes(), resp.volume().capacity_bytes());
  auto bigger = create_request("cl-placed", 128 * mib, "n2");
  st = controller().CreateVolume(call().get(), bigger, &again);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::ALREADY_EXISTS) << st.error_message();

  // n2 holds it: it stages there; n1 knows no such volume.
  v1::NodeStageVolumeRequest stage;
  stage.set_volume_id("cl-placed");
  stage.set_staging_target_path(berthd(2).kubelet_dir() + "/stage-placed");
  *stage.mutable_volume_capability() = req.volume_capabilities(0);
  v1::NodeStageVolumeResponse staged;
  st = node(2).NodeStageVolume(call().get(), stage, &staged);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  stage.set_staging_target_path(berthd(1).kubelet_dir() + "/stage-placed");
  st = node(1).NodeStageVolume(call().get(), stage, &staged);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << st.error_message();
  v1::NodeUnstageVolumeRequest unstage;
  unstage.set_volume_id("cl-placed");
  unstage.set_staging_target_path(berthd(2).kubelet_dir() + "/stage-placed");
  v1::NodeUnstageVolumeResponse unstaged;
  st = node(2).NodeUnstageVolume(call().get(), unstage, &unstaged);
  ASSERT_TRUE(st.ok()) << st.error_message();

  // Deleted: OK once the object is gone, and again (idempotent).
  v1::DeleteVolumeRequest del;
  del.set_volume_id("cl-placed");
  v1::DeleteVolumeResponse deleted;
  st = controller().DeleteVolume(call().get(), del, &deleted);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  EXPECT_FALSE(object_of("cl-placed"));
  st = controller().DeleteVolume(call().get(), del, &deleted);
  EXPECT_TRUE(st.ok()) << st.error_message();
}

TEST_F(cluster, an_expand_and_a_modify_together_are_one_backend_call_on_the_node) {
  v1::CreateVolumeResponse made;
  auto st = controller().CreateVolume(call().get(), create_request("cl-coalesce", 64 * mib, "n1"), &made);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  ASSERT_EQ(node_of(made.volume()), "n1");

  grpc::Status expanded, modified;
  v1::ControllerExpandVolumeResponse grown;
  std::thread expand{[&] {
    v1::ControllerExpandVolumeRequest req;
    req.set_volume_id("cl-coalesce");
    req.mutable_capacity_range()->set_required_bytes(128 * mib);
    expanded = controller().ControllerExpandVolume(call().get(), req, &grown);
  }};
  std::thread modify{[&] {
    v1::ControllerModifyVolumeRequest req;
    req.set_volume_id("cl-coalesce");
    (*req.mutable_mutable_parameters())["readAheadKB"] = "256";
    v1::ControllerModifyVolumeResponse resp;
    modified = controller().ControllerModifyVolume(call().get(), req, &resp);
  }};
  expand.join();
  modify.join();
  ASSERT_TRUE(expanded.ok()) << expanded.error_message() << logs();
  ASSERT_TRUE(modified.ok()) << modified.error_message() << logs();
  EXPECT_GE(grown.capacity_bytes(), 128 * mib);
  auto obj = object_of("cl-coalesce");
  ASSERT_TRUE(obj);
  EXPECT_GE(obj->status.capacity_bytes, uint64_t(128 * mib));
  EXPECT_EQ(obj->status.applied_parameters["readAheadKB"], "256");
  EXPECT_EQ(obj->status.modifications, 1u) << "the expand and the modify were not coalesced\n" << logs();
}

TEST_F(cluster, a_change_the_node_refuses_is_the_answer_and_is_taken_back) {
  v1::CreateVolumeResponse made;
  auto st = controller().CreateVolume(call().get(), create_request("cl-refused", 64 * mib, "n1"), &made);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  v1::ControllerModifyVolumeRequest bad;
  bad.set_volume_id("cl-refused");
  (*bad.mutable_mutable_parameters())["noSuchKnob"] = "1";
  v1::ControllerModifyVolumeResponse resp;
  st = controller().ControllerModifyVolume(call().get(), bad, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  EXPECT_NE(st.error_message().find("n1"), std::string::npos) << st.error_message();
  EXPECT_NE(st.error_message().find("noSuchKnob"), std::string::npos) << st.error_message();
  auto obj = object_of("cl-refused");
  ASSERT_TRUE(obj);
  EXPECT_EQ(obj->spec.mutable_parameters.count("noSuchKnob"), 0u) << "the refused change stayed in the spec";

  // The volume still grows: the refused parameter no longer rides along.
  v1::ControllerExpandVolumeRequest grow;
  grow.set_volume_id("cl-refused");
  grow.mutable_capacity_range()->set_required_bytes(96 * mib);
  v1::ControllerExpandVolumeResponse grown;
  st = controller().ControllerExpandVolume(call().get(), grow, &grown);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  EXPECT_GE(grown.capacity_bytes(), 96 * mib);

  v1::ControllerExpandVolumeRequest unknown;
  unknown.set_volume_id("cl-no-such-volume");
  unknown.mutable_capacity_range()->set_required_bytes(96 * mib);
  st = controller().ControllerExpandVolume(call().get(), unknown, &grown);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
}

// csi-sanity makes a volume with a mutable parameter no node knows: the node answers Failed,
// and the controller deletes the object at once. A real server's slower writes let that
// deletion reach the node while its own write of Failed is still on the wire; the node must
// carry it out then, not at its next resync, a minute later.
TEST_F(cluster_with_slow_status_writes, a_deletion_during_a_failed_create_is_carried_out_at_once) {
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto name = "cl-race-" + std::to_string(round);
    auto req = create_request(name, 64 * mib, round % 2 == 0 ? "n1" : "n2");
    (*req.mutable_mutable_parameters())["noSuchKnob"] = "1";
    v1::CreateVolumeResponse made;
    auto st = controller().CreateVolume(call().get(), req, &made);
    ASSERT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message() << logs();
    ASSERT_TRUE(eventually([&] { return !object_of(name); }, std::chrono::seconds(10)))
      << "BerthVolume of " << name << " still holds its finalizer\n" << logs();
  }
}

// The agent knows a volume by its object's name, and a name comes back: csi-sanity deletes
// and makes again one name in each of its ModifyVolume cases. A new object with an old
// name starts at generation 1, below what the agent answered for the old one.
TEST_F(cluster, a_volume_made_again_under_a_deleted_name_is_answered_anew) {
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    v1::CreateVolumeResponse made;
    auto st = controller().CreateVolume(call().get(), create_request("cl-again", 64 * mib, "n1"), &made);
    ASSERT_TRUE(st.ok()) << st.error_message() << logs();
    for (const char* read_ahead : {"256", "512"}) {
      v1::ControllerModifyVolumeRequest req;
      req.set_volume_id("cl-again");
      (*req.mutable_mutable_parameters())["readAheadKB"] = read_ahead;
      v1::ControllerModifyVolumeResponse resp;
      st = controller().ControllerModifyVolume(call().get(), req, &resp);
      ASSERT_TRUE(st.ok()) << st.error_message() << logs();
    }
    v1::DeleteVolumeRequest del;
    del.set_volume_id("cl-again");
    v1::DeleteVolumeResponse deleted;
    st = controller().DeleteVolume(call().get(), del, &deleted);
    ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  }
}

TEST_F(cluster, a_clone_stays_on_its_sources_node_and_says_so_when_it_cannot) {
  v1::CreateVolumeResponse made;
  auto st = controller().CreateVolume(call().get(), create_request("cl-source", 64 * mib, "n1"), &made);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  auto clone = create_request("cl-clone", 64 * mib, "n2");
  clone.mutable_volume_content_source()->mutable_volume()->set_volume_id("cl-source");
  v1::CreateVolumeResponse cloned;
  st = controller().CreateVolume(call().get(), clone, &cloned);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
  EXPECT_NE(st.error_message().find("n1"), std::string::npos) << st.error_message();
  EXPECT_NE(st.error_message().find("n2"), std::string::npos) << st.error_message();
  EXPECT_FALSE(object_of("cl-clone"));

  auto anywhere = create_request("cl-clone", 64 * mib, "");
  anywhere.mutable_volume_content_source()->mutable_volume()->set_volume_id("cl-source");
  st = controller().CreateVolume(call().get(), anywhere, &cloned);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  EXPECT_EQ(node_of(cloned.volume()), "n1");
}

TEST_F(cluster, a_restarted_node_takes_its_volumes_back_without_making_them_again) {
  v1::CreateVolumeResponse made;
  auto st = controller().CreateVolume(call().get(), create_request("cl-restart", 64 * mib, "n2"), &made);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  ASSERT_EQ(berthd(2).stop(), 0) << berthd(2).log_tail();
  // Grown while the node is down: the node carries it out once it is back. (berthd starts
  // from this thread: a child dies with the thread that forked it, PR_SET_PDEATHSIG.)
  grpc::Status st_grow;
  v1::ControllerExpandVolumeResponse grown;
  std::thread expand{[&] {
    v1::ControllerExpandVolumeRequest grow;
    grow.set_volume_id("cl-restart");
    grow.mutable_capacity_range()->set_required_bytes(96 * mib);
    st_grow = controller().ControllerExpandVolume(call(std::chrono::seconds(60)).get(), grow, &grown);
  }};
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto started = berthd(2).start();
  expand.join();
  ASSERT_EQ(started, "");
  ASSERT_TRUE(st_grow.ok()) << st_grow.error_message() << logs();
  EXPECT_GE(grown.capacity_bytes(), 96 * mib);
  auto obj = object_of("cl-restart");
  ASSERT_TRUE(obj);
  EXPECT_EQ(obj->status.phase, "Ready");
  EXPECT_GE(obj->status.capacity_bytes, uint64_t(96 * mib));
  // Made once, before the restart: the node took its record back.
  std::ifstream log{berthd(2).log_path()};
  size_t made_here = 0;
  for (std::string line; std::getline(log, line);) {
    made_here += line.find("volume cl-restart: created sparse image") != std::string::npos;
  }
  EXPECT_EQ(made_here, 1u) << berthd(2).log_tail();
}

TEST_F(cluster, a_node_killed_while_a_create_is_pending_ends_with_exactly_one_volume) {
  // n2 is frozen, so the create waits on it with its object written; then n2 dies. The
  // retry after the restart must end with one volume, and its deletion with nothing left.
  auto req = create_request("cl-killed", 64 * mib, "n2");
  ASSERT_EQ(::kill(berthd(2).pid(), SIGSTOP), 0);
  v1::CreateVolumeResponse first_resp;
  auto first = controller().CreateVolume(call(std::chrono::seconds(2)).get(), req, &first_resp);
  EXPECT_EQ(first.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << first.error_message();
  EXPECT_NE(first.error_message().find("retry"), std::string::npos) << first.error_message();
  ASSERT_TRUE(object_of("cl-killed").has_value());
  berthd(2).kill9();
  ASSERT_EQ(berthd(2).start(), "");
  v1::CreateVolumeResponse resp;
  auto st = controller().CreateVolume(call(std::chrono::seconds(60)).get(), req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  EXPECT_EQ(node_of(resp.volume()), "n2");
  auto images = berthd(2).state_dir() + "/block/volumes";
  size_t found = 0;
  for (const auto& entry : std::filesystem::directory_iterator(images)) {
    found += entry.path().filename().string().rfind("cl-killed", 0) == 0;
  }
  EXPECT_EQ(found, 1u) << "images of cl-killed in " << images;
  auto [rc, listed] = berthd(2).berthctl("volumes");
  EXPECT_EQ(rc, 0) << listed;
  size_t records = 0;
  for (size_t at = listed.find("cl-killed"); at != std::string::npos;
       at = listed.find("cl-killed", at + 1)) {
    ++records;
  }
  EXPECT_EQ(records, 1u) << listed;

  v1::DeleteVolumeRequest del;
  del.set_volume_id("cl-killed");
  v1::DeleteVolumeResponse deleted;
  st = controller().DeleteVolume(call().get(), del, &deleted);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  EXPECT_FALSE(object_of("cl-killed"));
  EXPECT_FALSE(std::filesystem::exists(images + "/cl-killed.img"));
  std::tie(rc, listed) = berthd(2).berthctl("volumes");
  EXPECT_EQ(listed.find("cl-killed"), std::string::npos) << listed;
  EXPECT_EQ(loop_devices_of(images), "");
}

TEST_F(cluster, a_volume_whose_storage_was_lost_can_still_be_deleted) {
  v1::CreateVolumeResponse made;
  auto st = controller().CreateVolume(call().get(), create_request("cl-lost", 64 * mib, "n2"), &made);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  ASSERT_EQ(berthd(2).stop(), 0) << berthd(2).log_tail();
  // The node's records are gone (its state was replaced): it reports the volume lost.
  for (const char* file : {"/state/journal.log", "/state/snapshot.json"}) {
    std::filesystem::remove(berthd(2).state_dir() + file);
  }
  ASSERT_EQ(berthd(2).start(), "");
  ASSERT_TRUE(eventually([] {
    auto obj = object_of("cl-lost");
    return obj && obj->status.phase == "Failed";
  })) << logs();
  // Deleting it is what the error tells the operator to do: the finalizer must go.
  v1::DeleteVolumeRequest del;
  del.set_volume_id("cl-lost");
  v1::DeleteVolumeResponse deleted;
  st = controller().DeleteVolume(call().get(), del, &deleted);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  EXPECT_FALSE(object_of("cl-lost")) << "the object is gone";
}

TEST_F(cluster, a_volume_no_object_names_is_kept_until_an_operator_removes_it) {
  v1::CreateVolumeResponse made;
  auto st = controller().CreateVolume(call().get(), create_request("cl-unclaimed", 64 * mib, "n2"),
                                      &made);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  // While n2 is down, its object goes without it: deleted, its finalizer taken by hand.
  ASSERT_EQ(berthd(2).stop(), 0) << berthd(2).log_tail();
  auto until = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(10); };
  auto obj = object_of("cl-unclaimed");
  ASSERT_TRUE(obj);
  ASSERT_TRUE(api().delete_object(kube::berth_volumes(), obj->name, until()));
  obj = object_of("cl-unclaimed");
  ASSERT_TRUE(obj);
  ASSERT_TRUE(api().merge_patch(kube::berth_volumes(), obj->name, "",
                                kube::finalizers_patch(obj->resource_version, {}), until()));
  ASSERT_FALSE(object_of("cl-unclaimed"));
  ASSERT_EQ(berthd(2).start(), "");
  std::string listed;
  ASSERT_TRUE(eventually([&] {
    listed = berthd(2).berthctl("unclaimed").second;
    return listed.find("  cl-unclaimed\n") != std::string::npos;
  })) << listed << logs();
  auto [kept, inspect] = berthd(2).berthctl("inspect cl-unclaimed");
  EXPECT_EQ(kept, 0) << "berth never removes it by itself: " << inspect;
  auto [removed, out] = berthd(2).berthctl("unclaimed rm cl-unclaimed");
  EXPECT_EQ(removed, 0) << out << logs();
  EXPECT_EQ(out, "unclaimed cl-unclaimed removed, with its storage\n");
  auto [gone, none] = berthd(2).berthctl("inspect cl-unclaimed");
  EXPECT_EQ(gone, 1) << none;
  EXPECT_EQ(berthd(2).berthctl("unclaimed").second.find("cl-unclaimed"), std::string::npos);
  // On n1, which never had it, and for a name an object claims: refused.
  v1::CreateVolumeResponse other;
  st = controller().CreateVolume(call().get(), create_request("cl-claimed", 64 * mib, "n1"), &other);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  auto [refused, why] = berthd(1).berthctl("unclaimed rm cl-claimed");
  EXPECT_EQ(refused, 1) << why;
  EXPECT_NE(why.find("it is not unclaimed"), std::string::npos) << why;
  v1::DeleteVolumeRequest del;
  del.set_volume_id("cl-claimed");
  v1::DeleteVolumeResponse deleted;
  st = controller().DeleteVolume(call().get(), del, &deleted);
  EXPECT_TRUE(st.ok()) << st.error_message() << logs();
}

} // namespace berth::cluster_test
