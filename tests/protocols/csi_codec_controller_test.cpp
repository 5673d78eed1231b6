// The CSI codec: the controller's requests decoded and its answers encoded.
#include "protocols/csi/csi_codec.hpp"

#include <caf/sec.hpp>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/csi/csi_server.hpp"
#include "protocols/csi/status.hpp"
#include "tests/protocols/csi_codec_fixture.hpp"

using namespace berth;
using namespace berth::csi;
using namespace berth::csi::testing;
using grpc::StatusCode;

// -- CreateVolume -------------------------------------------------------------------

TEST(csi_codec, decodes_a_create_volume_request) {
  auto req = create_req();
  req.mutable_capacity_range()->set_required_bytes(1 << 20);
  req.mutable_capacity_range()->set_limit_bytes(2 << 20);
  (*req.mutable_parameters())["backend"] = "block";
  (*req.mutable_parameters())["csi.storage.k8s.io/pvc/name"] = "claim";
  (*req.mutable_parameters())["o"] = "noatime";
  req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id("snap-1");
  volume_spec spec;
  ASSERT_TRUE(decode_create_volume(req, env(), spec).ok());
  EXPECT_EQ(spec.kind, record_kind::volume);
  EXPECT_EQ(spec.backend, "block");
  EXPECT_EQ(spec.required_bytes, 1u << 20);
  EXPECT_EQ(spec.limit_bytes, 2u << 20);
  EXPECT_EQ(spec.source, snapshot_source("snap-1"));
  EXPECT_EQ(spec.parameters, (option_map{{"fsType", "xfs"}, {"o", "noatime"}}));
}

TEST(csi_codec, create_volume_defaults_and_clone_source) {
  v1::CreateVolumeRequest req;
  req.set_name("v");
  *req.add_volume_capabilities() = block_cap();
  req.mutable_volume_content_source()->mutable_volume()->set_volume_id("v0");
  volume_spec spec;
  ASSERT_TRUE(decode_create_volume(req, env(), spec).ok());
  EXPECT_EQ(spec.backend, "block");
  EXPECT_EQ(spec.required_bytes, 0u);
  EXPECT_EQ(spec.source, volume_source("v0"));
  EXPECT_TRUE(spec.parameters.empty());
}

TEST(csi_codec, create_volume_on_local_ignores_fs_type) {
  auto req = create_req();
  (*req.mutable_parameters())["backend"] = "local";
  volume_spec spec;
  ASSERT_TRUE(decode_create_volume(req, env(), spec).ok());
  EXPECT_EQ(spec.backend, "local");
  EXPECT_TRUE(spec.parameters.empty());
}

TEST(csi_codec, refuses_bad_create_volume_requests) {
  volume_spec spec;
  auto expect = [&](const v1::CreateVolumeRequest& req, StatusCode code, const char* names) {
    auto st = decode_create_volume(req, env(), spec);
    EXPECT_EQ(st.error_code(), code) << st.error_message();
    EXPECT_NE(st.error_message().find(names), std::string::npos) << st.error_message();
  };
  expect(create_req(""), StatusCode::INVALID_ARGUMENT, "name");
  expect(create_req("../etc"), StatusCode::INVALID_ARGUMENT, "../etc");
  auto no_caps = create_req();
  no_caps.clear_volume_capabilities();
  expect(no_caps, StatusCode::INVALID_ARGUMENT, "volume_capabilities");
  auto range = create_req();
  range.mutable_capacity_range()->set_required_bytes(10);
  range.mutable_capacity_range()->set_limit_bytes(5);
  expect(range, StatusCode::INVALID_ARGUMENT, "limit_bytes 5");
  auto negative = create_req();
  negative.mutable_capacity_range()->set_required_bytes(-1);
  expect(negative, StatusCode::INVALID_ARGUMENT, "-1");
  auto backend = create_req();
  (*backend.mutable_parameters())["backend"] = "ceph";
  expect(backend, StatusCode::INVALID_ARGUMENT, "ceph");
  auto block_local = create_req();
  *block_local.add_volume_capabilities() = block_cap();
  (*block_local.mutable_parameters())["backend"] = "local";
  expect(block_local, StatusCode::INVALID_ARGUMENT, "block");
  auto two_fs = create_req();
  *two_fs.add_volume_capabilities() = mount_cap("ext4");
  expect(two_fs, StatusCode::INVALID_ARGUMENT, "ext4");
  auto fs_param = create_req();
  (*fs_param.mutable_parameters())["fsType"] = "ext4";
  expect(fs_param, StatusCode::INVALID_ARGUMENT, "fsType");
  auto multi = create_req();
  *multi.add_volume_capabilities() = mount_cap("", mode::MULTI_NODE_MULTI_WRITER);
  expect(multi, StatusCode::INVALID_ARGUMENT, "MULTI_NODE_MULTI_WRITER");
  auto empty_source = create_req();
  empty_source.mutable_volume_content_source();
  expect(empty_source, StatusCode::INVALID_ARGUMENT, "volume_content_source");
  auto bad_source = create_req();
  bad_source.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id("a/b");
  expect(bad_source, StatusCode::NOT_FOUND, "a/b");
}

TEST(csi_codec, decodes_create_snapshot) {
  v1::CreateSnapshotRequest req;
  req.set_name("snap-1");
  req.set_source_volume_id("pvc-1");
  volume_spec spec;
  ASSERT_TRUE(decode_create_snapshot(req, env(), spec).ok());
  EXPECT_EQ(spec.kind, record_kind::snapshot);
  EXPECT_EQ(spec.backend, "block");
  EXPECT_EQ(spec.source, volume_source("pvc-1"));
  req.clear_source_volume_id();
  EXPECT_EQ(decode_create_snapshot(req, env(), spec).error_code(), StatusCode::INVALID_ARGUMENT);
  req.set_source_volume_id("pvc-1");
  req.clear_name();
  EXPECT_EQ(decode_create_snapshot(req, env(), spec).error_code(), StatusCode::INVALID_ARGUMENT);
}

TEST(csi_codec, decodes_expand) {
  v1::ControllerExpandVolumeRequest req;
  uint64_t bytes = 0;
  EXPECT_EQ(decode_expand(req, bytes).error_code(), StatusCode::INVALID_ARGUMENT);
  req.mutable_capacity_range()->set_limit_bytes(100);
  ASSERT_TRUE(decode_expand(req, bytes).ok());
  EXPECT_EQ(bytes, 100u);
  req.mutable_capacity_range()->set_required_bytes(50);
  ASSERT_TRUE(decode_expand(req, bytes).ok());
  EXPECT_EQ(bytes, 50u);
  req.mutable_capacity_range()->set_required_bytes(200);
  EXPECT_EQ(decode_expand(req, bytes).error_code(), StatusCode::INVALID_ARGUMENT);
}

// -- topology -----------------------------------------------------------------------

TEST(csi_codec, topology_must_include_this_node) {
  v1::TopologyRequirement req;
  EXPECT_TRUE(check_topology(req, env()).ok());
  auto key = topology_key("berth.csi.dev");
  EXPECT_EQ(key, "topology.berth.csi.dev/node");
  (*req.add_requisite()->mutable_segments())[key] = "node-2";
  auto st = check_topology(req, env());
  EXPECT_EQ(st.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(st.error_message().find("node-1"), std::string::npos);
  (*req.add_preferred()->mutable_segments())[key] = "node-1";
  EXPECT_TRUE(check_topology(req, env()).ok());
}

// -- encoding -----------------------------------------------------------------------

TEST(csi_codec, encodes_a_volume) {
  auto r = rec("pvc-1", record_kind::volume, snapshot_source("snap-1"));
  r.capacity_bytes = 1 << 30;
  r.options["fsType"] = "ext4";
  v1::Volume vol;
  encode_volume(r, env(), &vol);
  EXPECT_EQ(vol.volume_id(), "pvc-1");
  EXPECT_EQ(vol.capacity_bytes(), 1 << 30);
  EXPECT_EQ(vol.volume_context().at("backend"), "block");
  EXPECT_EQ(vol.volume_context().at("fsType"), "ext4");
  EXPECT_EQ(vol.content_source().snapshot().snapshot_id(), "snap-1");
  ASSERT_EQ(vol.accessible_topology_size(), 1);
  EXPECT_EQ(vol.accessible_topology(0).segments().at("topology.berth.csi.dev/node"), "node-1");
}

TEST(csi_codec, encodes_a_snapshot) {
  auto r = rec("snap-1", record_kind::snapshot, volume_source("pvc-1"));
  r.capacity_bytes = 4096;
  r.created_at = "2026-11-30T18:00:00Z";
  v1::Snapshot snap;
  encode_snapshot(r, &snap);
  EXPECT_EQ(snap.snapshot_id(), "snap-1");
  EXPECT_EQ(snap.source_volume_id(), "pvc-1");
  EXPECT_EQ(snap.size_bytes(), 4096);
  EXPECT_TRUE(snap.ready_to_use());
  EXPECT_EQ(snap.creation_time().seconds(), 1796061600);
  EXPECT_FALSE(parse_rfc3339("yesterday"));
  EXPECT_FALSE(parse_rfc3339(""));
}

TEST(csi_codec, encodes_stats) {
  volume_stats fs;
  fs.total_bytes = 100;
  fs.available_bytes = 60;
  fs.used_bytes = 40;
  fs.total_inodes = 10;
  fs.free_inodes = 7;
  fs.used_inodes = 3;
  v1::NodeGetVolumeStatsResponse resp;
  encode_stats(fs, {}, &resp);
  ASSERT_EQ(resp.usage_size(), 2);
  EXPECT_EQ(resp.usage(0).unit(), v1::VolumeUsage::BYTES);
  EXPECT_EQ(resp.usage(0).available(), 60);
  EXPECT_EQ(resp.usage(1).unit(), v1::VolumeUsage::INODES);
  EXPECT_EQ(resp.usage(1).used(), 3);
  EXPECT_FALSE(resp.volume_condition().abnormal());

  volume_stats blk;
  blk.block = true;
  blk.total_bytes = 100;
  blk.abnormal = true;
  blk.message = "device /dev/loop3 is gone";
  v1::NodeGetVolumeStatsResponse resp2;
  encode_stats(blk, {}, &resp2);
  ASSERT_EQ(resp2.usage_size(), 1);
  EXPECT_EQ(resp2.usage(0).total(), 100);
  EXPECT_TRUE(resp2.volume_condition().abnormal());
  EXPECT_EQ(resp2.volume_condition().message(), "device /dev/loop3 is gone");
}

TEST(csi_codec, encodes_what_the_health_sampler_saw_beside_what_the_stats_saw) {
  volume_stats fs;
  v1::NodeGetVolumeStatsResponse seen_only;
  encode_stats(fs, {{abnormal_reason::filesystem_errors, "ext4 recorded 2 errors"}}, &seen_only);
  EXPECT_TRUE(seen_only.volume_condition().abnormal()) << "statvfs works, the sampler saw errors";
  EXPECT_EQ(seen_only.volume_condition().message(), "ext4 recorded 2 errors");

  fs.abnormal = true;
  fs.message = "/staging is not mounted";
  v1::NodeGetVolumeStatsResponse both;
  encode_stats(fs,
               {{abnormal_reason::image_short, "the image is short"},
                {abnormal_reason::mount_gone, "the staging path is not mounted any more"}},
               &both);
  EXPECT_EQ(both.volume_condition().message(), "/staging is not mounted; the image is short")
    << "what the stats saw afresh is said once";
}
