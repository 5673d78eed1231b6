// CSI Controller service: CreateVolume, DeleteVolume, ValidateVolumeCapabilities,
// ListVolumes, GetCapacity, ControllerGetCapabilities, ControllerGetVolume,
// ControllerExpandVolume. Snapshots are in snapshot_test.cpp.

#include <set>

#include "tests/csi/csi_fixture.hpp"

namespace berth::csi_test {
namespace {

using ControllerTest = csi_fixture;
using Rpc = v1::ControllerServiceCapability::RPC;

// -- CreateVolume: invalid requests --------------------------------------------

TEST_F(ControllerTest, CreateVolumeWithoutNameIsInvalidArgument) {
  v1::CreateVolumeResponse resp;
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::CreateVolume, create_request("", GiB), resp));
}

TEST_F(ControllerTest, CreateVolumeWithoutCapabilitiesIsInvalidArgument) {
  auto req = create_request("nocaps", GiB);
  req.clear_volume_capabilities();
  v1::CreateVolumeResponse resp;
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::CreateVolume, req, resp));
}

TEST_F(ControllerTest, CreateVolumeWithMultiNodeAccessIsInvalidArgument) {
  v1::CreateVolumeResponse resp;
  for (auto mode : {Mode::MULTI_NODE_MULTI_WRITER, Mode::MULTI_NODE_READER_ONLY,
                    Mode::MULTI_NODE_SINGLE_WRITER}) {
    auto req = create_request("multi", GiB, 0, {}, mount_cap("", mode));
    EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::CreateVolume, req, resp));
  }
}

TEST_F(ControllerTest, CreateVolumeWithBadFsTypeIsInvalidArgument) {
  v1::CreateVolumeResponse resp;
  EXPECT_RPC(INVALID_ARGUMENT,
             call(&Ctrl::CreateVolume, create_request("badfs", GiB, 0, {{"fsType", "ntfs"}}), resp));
}

TEST_F(ControllerTest, CreateVolumeWithUnknownParameterIsInvalidArgument) {
  v1::CreateVolumeResponse resp;
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::CreateVolume,
                                    create_request("unknown", GiB, 0, {{"frobnicate", "1"}}), resp));
}

// -- CreateVolume: idempotency and conflicts -------------------------------------

TEST_F(ControllerTest, CreateVolumeTwiceReturnsTheSameVolume) {
  v1::Volume first;
  v1::Volume second;
  ASSERT_TRUE(create_volume("twice", &first));
  ASSERT_TRUE(create_volume("twice", &second));
  EXPECT_EQ(first.volume_id(), second.volume_id());
  EXPECT_EQ(first.capacity_bytes(), second.capacity_bytes());
  EXPECT_GE(first.capacity_bytes(), static_cast<int64_t>(GiB));
}

TEST_F(ControllerTest, CreateVolumeSameNameOtherCapacityIsAlreadyExists) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("conflict", &vol));
  v1::CreateVolumeResponse resp;
  EXPECT_RPC(ALREADY_EXISTS,
             call(&Ctrl::CreateVolume, create_request("conflict", 3 * GiB, 3 * GiB), resp));
}

TEST_F(ControllerTest, CreateVolumeSameNameOtherFsTypeIsAlreadyExists) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("conflictfs", &vol, {{"fsType", "xfs"}}));
  v1::CreateVolumeResponse resp;
  EXPECT_RPC(ALREADY_EXISTS, call(&Ctrl::CreateVolume,
                                  create_request("conflictfs", GiB, 0, {{"fsType", "ext4"}}), resp));
}

// -- CreateVolume: capacity ------------------------------------------------------

TEST_F(ControllerTest, CreateVolumeRoundsATinyRequestUpWithinTheLimit) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume(create_request("tiny", 1, GiB), &vol));
  EXPECT_GE(vol.capacity_bytes(), 1);
  EXPECT_LE(vol.capacity_bytes(), static_cast<int64_t>(GiB));
}

TEST_F(ControllerTest, CreateVolumeRoundsAnOddSizeUp) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume(create_request("odd", GiB + 1, 0), &vol));
  EXPECT_GE(vol.capacity_bytes(), static_cast<int64_t>(GiB + 1));
}

TEST_F(ControllerTest, CreateVolumeRequiredAboveLimitIsInvalidArgument) {
  v1::CreateVolumeResponse resp;
  EXPECT_RPC(INVALID_ARGUMENT,
             call(&Ctrl::CreateVolume, create_request("inverted", 2 * GiB, GiB), resp));
}

TEST_F(ControllerTest, CreateVolumeWithLimitBelowTheMinimumIsOutOfRange) {
  v1::CreateVolumeResponse resp;
  EXPECT_RPC(OUT_OF_RANGE, call(&Ctrl::CreateVolume, create_request("small", 1, 4096), resp));
}

TEST_F(ControllerTest, CreateVolumeReportsTheNodeTopology) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("topo", &vol));
  bool found = false;
  for (auto& topo : vol.accessible_topology()) {
    auto it = topo.segments().find(topology_key);
    found |= it != topo.segments().end() && it->second == node_id;
  }
  EXPECT_TRUE(found) << "accessible_topology lacks " << topology_key << "=" << node_id << ": "
                     << vol.ShortDebugString();
}

// -- DeleteVolume ---------------------------------------------------------------

TEST_F(ControllerTest, DeleteVolumeTwiceIsOk) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("del", &vol));
  EXPECT_TRUE(delete_volume(vol.volume_id()));
  EXPECT_TRUE(delete_volume(vol.volume_id()));
  v1::ControllerGetVolumeRequest get;
  get.set_volume_id(vol.volume_id());
  v1::ControllerGetVolumeResponse resp;
  EXPECT_RPC(NOT_FOUND, call(&Ctrl::ControllerGetVolume, get, resp));
}

TEST_F(ControllerTest, DeleteUnknownVolumeIsOk) {
  EXPECT_TRUE(delete_volume("never-created"));
}

TEST_F(ControllerTest, DeleteVolumeWithoutIdIsInvalidArgument) {
  v1::DeleteVolumeResponse resp;
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::DeleteVolume, v1::DeleteVolumeRequest{}, resp));
}

TEST_F(ControllerTest, DeleteStagedVolumeIsFailedPrecondition) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("staged", &vol));
  auto staging = staging_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  v1::DeleteVolumeRequest req;
  req.set_volume_id(vol.volume_id());
  v1::DeleteVolumeResponse resp;
  EXPECT_RPC(FAILED_PRECONDITION, call(&Ctrl::DeleteVolume, req, resp));
  EXPECT_TRUE(mount_at(staging).has_value()) << "a refused delete must leave the stage alone";
  ASSERT_TRUE(unstage(vol.volume_id(), staging));
  EXPECT_TRUE(delete_volume(vol.volume_id()));
}

// -- ValidateVolumeCapabilities --------------------------------------------------

TEST_F(ControllerTest, ValidateVolumeCapabilitiesConfirmsSingleNodeWriter) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("valid", &vol));
  v1::ValidateVolumeCapabilitiesRequest req;
  req.set_volume_id(vol.volume_id());
  *req.add_volume_capabilities() = mount_cap();
  v1::ValidateVolumeCapabilitiesResponse resp;
  ASSERT_RPC(OK, call(&Ctrl::ValidateVolumeCapabilities, req, resp));
  ASSERT_TRUE(resp.has_confirmed()) << resp.ShortDebugString();
  EXPECT_EQ(resp.confirmed().volume_capabilities_size(), 1) << resp.ShortDebugString();
}

TEST_F(ControllerTest, ValidateVolumeCapabilitiesDoesNotConfirmMultiNode) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("multi", &vol));
  v1::ValidateVolumeCapabilitiesRequest req;
  req.set_volume_id(vol.volume_id());
  *req.add_volume_capabilities() = mount_cap("", Mode::MULTI_NODE_MULTI_WRITER);
  v1::ValidateVolumeCapabilitiesResponse resp;
  ASSERT_RPC(OK, call(&Ctrl::ValidateVolumeCapabilities, req, resp));
  EXPECT_FALSE(resp.has_confirmed()) << resp.ShortDebugString();
  EXPECT_FALSE(resp.message().empty()) << "an unconfirmed answer should say why";
}

TEST_F(ControllerTest, ValidateVolumeCapabilitiesOfUnknownVolumeIsNotFound) {
  v1::ValidateVolumeCapabilitiesRequest req;
  req.set_volume_id("never-created");
  *req.add_volume_capabilities() = mount_cap();
  v1::ValidateVolumeCapabilitiesResponse resp;
  EXPECT_RPC(NOT_FOUND, call(&Ctrl::ValidateVolumeCapabilities, req, resp));
}

TEST_F(ControllerTest, ValidateVolumeCapabilitiesWithMissingFieldsIsInvalidArgument) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("valid", &vol));
  v1::ValidateVolumeCapabilitiesResponse resp;
  v1::ValidateVolumeCapabilitiesRequest no_caps;
  no_caps.set_volume_id(vol.volume_id());
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::ValidateVolumeCapabilities, no_caps, resp));
  v1::ValidateVolumeCapabilitiesRequest no_id;
  *no_id.add_volume_capabilities() = mount_cap();
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::ValidateVolumeCapabilities, no_id, resp));
}

// -- ListVolumes --------------------------------------------------------------------

TEST_F(ControllerTest, ListVolumesPaginates) {
  std::set<std::string> created;
  for (int i = 0; i < 5; ++i) {
    v1::Volume vol;
    ASSERT_TRUE(create_volume("list-" + std::to_string(i), &vol));
    created.insert(vol.volume_id());
  }
  std::multiset<std::string> seen;
  std::vector<int> page_sizes;
  std::string token;
  for (int page = 0; page < 10; ++page) {
    v1::ListVolumesRequest req;
    req.set_max_entries(2);
    req.set_starting_token(token);
    v1::ListVolumesResponse resp;
    ASSERT_RPC(OK, call(&Ctrl::ListVolumes, req, resp));
    page_sizes.push_back(resp.entries_size());
    for (auto& e : resp.entries()) {
      seen.insert(e.volume().volume_id());
    }
    token = resp.next_token();
    if (token.empty()) {
      break;
    }
  }
  EXPECT_EQ(page_sizes, (std::vector<int>{2, 2, 1}));
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), created);
  EXPECT_EQ(seen.size(), created.size()) << "a volume was listed twice";
  // Without max_entries: everything in one page.
  v1::ListVolumesResponse all;
  ASSERT_RPC(OK, call(&Ctrl::ListVolumes, v1::ListVolumesRequest{}, all));
  EXPECT_EQ(all.entries_size(), 5);
  EXPECT_TRUE(all.next_token().empty());
}

TEST_F(ControllerTest, ListVolumesNamesThisNodeWhileAVolumeIsInUseHere) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("used", &vol));
  auto nodes_of = [&] {
    v1::ListVolumesResponse resp;
    EXPECT_RPC(OK, call(&Ctrl::ListVolumes, v1::ListVolumesRequest{}, resp));
    std::vector<std::string> out;
    for (const auto& e : resp.entries()) {
      if (e.volume().volume_id() == vol.volume_id()) {
        out.assign(e.status().published_node_ids().begin(), e.status().published_node_ids().end());
      }
    }
    return out;
  };
  EXPECT_EQ(nodes_of(), std::vector<std::string>{}) << "created, not staged: on no node";
  auto staging = staging_path(vol.volume_id());
  auto target = target_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  EXPECT_EQ(nodes_of(), std::vector<std::string>{node_id}) << "staged here";
  ASSERT_TRUE(publish(vol.volume_id(), staging, target));
  EXPECT_EQ(nodes_of(), std::vector<std::string>{node_id}) << "once, however many targets";
  ASSERT_TRUE(unpublish(vol.volume_id(), target));
  ASSERT_TRUE(unstage(vol.volume_id(), staging));
  EXPECT_EQ(nodes_of(), std::vector<std::string>{}) << "unstaged: on no node again";
}

TEST_F(ControllerTest, ListVolumesWithBogusTokenIsAborted) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("one", &vol));
  v1::ListVolumesRequest req;
  req.set_starting_token("no-such-token-\x01");
  v1::ListVolumesResponse resp;
  EXPECT_RPC(ABORTED, call(&Ctrl::ListVolumes, req, resp));
}

TEST_F(ControllerTest, ListVolumesWithNegativeMaxEntriesIsInvalidArgument) {
  v1::ListVolumesRequest req;
  req.set_max_entries(-1);
  v1::ListVolumesResponse resp;
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::ListVolumes, req, resp));
}

// -- GetCapacity, ControllerGetCapabilities ------------------------------------------

TEST_F(ControllerTest, GetCapacityIsPositive) {
  v1::GetCapacityRequest req;
  *req.add_volume_capabilities() = mount_cap();
  v1::GetCapacityResponse resp;
  ASSERT_RPC(OK, call(&Ctrl::GetCapacity, req, resp));
  EXPECT_GT(resp.available_capacity(), 0);
}

TEST_F(ControllerTest, ControllerGetCapabilitiesListsTheExpectedSet) {
  v1::ControllerGetCapabilitiesResponse resp;
  ASSERT_RPC(OK, call(&Ctrl::ControllerGetCapabilities, v1::ControllerGetCapabilitiesRequest{},
                      resp));
  std::set<int> have;
  for (auto& cap : resp.capabilities()) {
    have.insert(cap.rpc().type());
  }
  for (auto want :
       {Rpc::CREATE_DELETE_VOLUME, Rpc::LIST_VOLUMES, Rpc::GET_CAPACITY,
        Rpc::CREATE_DELETE_SNAPSHOT, Rpc::LIST_SNAPSHOTS, Rpc::CLONE_VOLUME, Rpc::EXPAND_VOLUME,
        Rpc::GET_VOLUME, Rpc::VOLUME_CONDITION, Rpc::LIST_VOLUMES_PUBLISHED_NODES}) {
    EXPECT_EQ(have.count(want), 1u) << "missing " << Rpc::Type_Name(want) << " in "
                                    << resp.ShortDebugString();
  }
  // berth attaches on the node (loop device): no ControllerPublish, so the
  // external-attacher must not be told otherwise.
  EXPECT_EQ(have.count(Rpc::PUBLISH_UNPUBLISH_VOLUME), 0u) << resp.ShortDebugString();
}

// -- ControllerGetVolume ------------------------------------------------------------

TEST_F(ControllerTest, ControllerGetVolumeReturnsTheVolume) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("get", &vol));
  v1::ControllerGetVolumeRequest req;
  req.set_volume_id(vol.volume_id());
  v1::ControllerGetVolumeResponse resp;
  ASSERT_RPC(OK, call(&Ctrl::ControllerGetVolume, req, resp));
  EXPECT_EQ(resp.volume().volume_id(), vol.volume_id());
  EXPECT_EQ(resp.volume().capacity_bytes(), vol.capacity_bytes());
  EXPECT_FALSE(resp.status().volume_condition().abnormal()) << resp.ShortDebugString();
}

TEST_F(ControllerTest, ControllerGetVolumeOfUnknownVolumeIsNotFound) {
  v1::ControllerGetVolumeRequest req;
  req.set_volume_id("never-created");
  v1::ControllerGetVolumeResponse resp;
  EXPECT_RPC(NOT_FOUND, call(&Ctrl::ControllerGetVolume, req, resp));
}

// -- ControllerExpandVolume ------------------------------------------------------------

TEST_F(ControllerTest, ControllerExpandVolumeGrowsAndAsksForNodeExpansion) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("grow", &vol));
  v1::ControllerExpandVolumeResponse resp;
  ASSERT_TRUE(controller_expand(vol.volume_id(), 2 * GiB, &resp));
  EXPECT_GE(resp.capacity_bytes(), static_cast<int64_t>(2 * GiB));
  EXPECT_TRUE(resp.node_expansion_required()) << "a mount volume's filesystem must be grown";
  // Idempotent: the same size again is success with the same capacity.
  v1::ControllerExpandVolumeResponse again;
  ASSERT_TRUE(controller_expand(vol.volume_id(), 2 * GiB, &again));
  EXPECT_EQ(again.capacity_bytes(), resp.capacity_bytes());
  v1::ControllerGetVolumeRequest get;
  get.set_volume_id(vol.volume_id());
  v1::ControllerGetVolumeResponse got;
  ASSERT_RPC(OK, call(&Ctrl::ControllerGetVolume, get, got));
  EXPECT_EQ(got.volume().capacity_bytes(), resp.capacity_bytes());
}

TEST_F(ControllerTest, ControllerExpandVolumeRefusesAShrinkWithOutOfRange) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("shrink", &vol, {}, 2 * GiB));
  v1::ControllerExpandVolumeRequest req;
  req.set_volume_id(vol.volume_id());
  req.mutable_capacity_range()->set_required_bytes(static_cast<int64_t>(GiB));
  v1::ControllerExpandVolumeResponse resp;
  // The spec also allows success with the current size; berth documents a refusal.
  EXPECT_RPC(OUT_OF_RANGE, call(&Ctrl::ControllerExpandVolume, req, resp));
}

TEST_F(ControllerTest, ControllerExpandUnknownVolumeIsNotFound) {
  v1::ControllerExpandVolumeRequest req;
  req.set_volume_id("never-created");
  req.mutable_capacity_range()->set_required_bytes(static_cast<int64_t>(2 * GiB));
  v1::ControllerExpandVolumeResponse resp;
  EXPECT_RPC(NOT_FOUND, call(&Ctrl::ControllerExpandVolume, req, resp));
}

TEST_F(ControllerTest, ControllerExpandWithoutCapacityIsInvalidArgument) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("nocap", &vol));
  v1::ControllerExpandVolumeRequest req;
  req.set_volume_id(vol.volume_id());
  v1::ControllerExpandVolumeResponse resp;
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::ControllerExpandVolume, req, resp));
}

} // namespace
} // namespace berth::csi_test
