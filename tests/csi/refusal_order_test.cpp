// The refusal order against the real berthd: a missing required field is
// INVALID_ARGUMENT, then an unknown volume NOT_FOUND, then a path where the volume is
// not NOT_FOUND, and only then the request's content (docs/csi-errors.md). One case
// per spec of csi-sanity v5.3.1 that this order decides, named after the spec, and
// the same order for the RPCs the suite does not probe this way.

#include "tests/csi/csi_fixture.hpp"

namespace berth::csi_test {
namespace {

using RefusalOrderTest = csi_fixture;

/// A ControllerModifyVolume of `id` with `params`.
v1::ControllerModifyVolumeRequest modify_request(
  const std::string& id, const std::map<std::string, std::string>& params = {}) {
  v1::ControllerModifyVolumeRequest req;
  req.set_volume_id(id);
  for (const auto& [key, value] : params) {
    (*req.mutable_mutable_parameters())[key] = value;
  }
  return req;
}

// -- the five specs of csi-sanity ----------------------------------------------------

// "NodeGetVolumeStats should fail when no volume path is provided": an unknown
// volume and an empty path.
TEST_F(RefusalOrderTest, NodeGetVolumeStatsWithoutAPathIsInvalidArgumentEvenForAnUnknownVolume) {
  v1::NodeGetVolumeStatsRequest req;
  req.set_volume_id("never-created");
  v1::NodeGetVolumeStatsResponse resp;
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodeGetVolumeStats, req, resp));
}

// "NodeGetVolumeStats should fail when volume does not exist on the specified path":
// a volume that exists, and the relative path "some/path".
TEST_F(RefusalOrderTest, NodeGetVolumeStatsOfARelativePathIsNotFound) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  v1::NodeGetVolumeStatsRequest req;
  req.set_volume_id(vol.volume_id());
  req.set_volume_path("some/path");
  v1::NodeGetVolumeStatsResponse resp;
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeGetVolumeStats, req, resp));
}

// "ModifyVolume should fail if volume does not exist": no mutable parameters.
TEST_F(RefusalOrderTest, ModifyOfAnUnknownVolumeWithNoParametersIsNotFound) {
  v1::ControllerModifyVolumeResponse resp;
  EXPECT_RPC(NOT_FOUND, call(&Ctrl::ControllerModifyVolume, modify_request("never-created"), resp));
}

// "ModifyVolume should modify a volume created without a volume attribute class".
TEST_F(RefusalOrderTest, ModifyWithNoParametersOfAVolumeCreatedWithoutThemIsOk) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  v1::ControllerModifyVolumeResponse resp;
  EXPECT_RPC(OK, call(&Ctrl::ControllerModifyVolume, modify_request(vol.volume_id()), resp));
}

// "ModifyVolume should modify a volume created with a volume attribute class": the
// suite sends the class's parameters at create, and an empty map to modify.
TEST_F(RefusalOrderTest, ModifyWithNoParametersOfAVolumeCreatedWithThemIsOkAndKeepsThem) {
  auto req = create_request("v", GiB);
  (*req.mutable_mutable_parameters())["readAheadKB"] = "256";
  v1::Volume vol;
  ASSERT_TRUE(create_volume(req, &vol));
  v1::ControllerModifyVolumeResponse resp;
  EXPECT_RPC(OK, call(&Ctrl::ControllerModifyVolume, modify_request(vol.volume_id()), resp));
  // And a modify that names a parameter still reaches the volume.
  EXPECT_RPC(OK, call(&Ctrl::ControllerModifyVolume,
                      modify_request(vol.volume_id(), {{"readAheadKB", "256"}}), resp));
}

// -- the same order elsewhere ----------------------------------------------------------

TEST_F(RefusalOrderTest, NodeExpandFollowsTheSameOrder) {
  v1::NodeExpandVolumeRequest req;
  req.set_volume_id("never-created");
  v1::NodeExpandVolumeResponse resp;
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodeExpandVolume, req, resp)) << "no volume_path";
  req.set_volume_path("some/path");
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeExpandVolume, req, resp)) << "unknown volume";
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  req.set_volume_id(vol.volume_id());
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeExpandVolume, req, resp)) << "a relative path";
  req.set_volume_path(target_path(vol.volume_id()));
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeExpandVolume, req, resp)) << "neither staged nor published";
  req.set_volume_path(staging_path(vol.volume_id()));
  req.mutable_capacity_range()->set_required_bytes(-1);
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeExpandVolume, req, resp))
    << "a bad range on a path where the volume is not staged: the path comes first";
  req.set_volume_id("never-created");
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeExpandVolume, req, resp))
    << "an unknown volume comes before the range";
}

TEST_F(RefusalOrderTest, AContentRefusalComesOnlyForAVolumeThatExists) {
  // A multi-node capability is content: NOT_FOUND for an unknown volume, INVALID_ARGUMENT
  // for one that exists.
  v1::NodeStageVolumeRequest stage;
  stage.set_volume_id("never-created");
  stage.set_staging_target_path(staging_path("never-created"));
  *stage.mutable_volume_capability() = mount_cap("", Mode::MULTI_NODE_MULTI_WRITER);
  v1::NodeStageVolumeResponse staged;
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeStageVolume, stage, staged));
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  stage.set_volume_id(vol.volume_id());
  stage.set_staging_target_path(staging_path(vol.volume_id()));
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodeStageVolume, stage, staged));
  stage.clear_volume_capability();
  stage.set_volume_id("never-created");
  EXPECT_RPC(INVALID_ARGUMENT, call(&Node::NodeStageVolume, stage, staged))
    << "a missing capability comes before the unknown volume";

  v1::ControllerExpandVolumeRequest expand;
  expand.set_volume_id("never-created");
  v1::ControllerExpandVolumeResponse expanded;
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::ControllerExpandVolume, expand, expanded))
    << "capacity_range is REQUIRED";
  expand.mutable_capacity_range()->set_required_bytes(-1);
  EXPECT_RPC(NOT_FOUND, call(&Ctrl::ControllerExpandVolume, expand, expanded));
  expand.set_volume_id(vol.volume_id());
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::ControllerExpandVolume, expand, expanded));

  std::map<std::string, std::string> too_long{{std::string(1000, 'k'), "1"}};
  v1::ControllerModifyVolumeResponse modified;
  EXPECT_RPC(NOT_FOUND,
             call(&Ctrl::ControllerModifyVolume, modify_request("never-created", too_long), modified));
  EXPECT_RPC(INVALID_ARGUMENT,
             call(&Ctrl::ControllerModifyVolume, modify_request(vol.volume_id(), too_long), modified));
}

} // namespace
} // namespace berth::csi_test
