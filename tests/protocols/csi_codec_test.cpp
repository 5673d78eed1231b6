#include "protocols/csi/csi_codec.hpp"

#include <caf/sec.hpp>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/csi/csi_server.hpp"
#include "protocols/csi/status.hpp"

using namespace berth;
using namespace berth::csi;
using grpc::StatusCode;

namespace {

using mode = v1::VolumeCapability::AccessMode;

codec_env env() {
  codec_env e;
  e.node_id = "node-1";
  e.default_backend = "block";
  e.backends = {"block", "local"};
  return e;
}

v1::VolumeCapability mount_cap(const std::string& fs = "", mode::Mode m = mode::SINGLE_NODE_WRITER) {
  v1::VolumeCapability cap;
  cap.mutable_mount()->set_fs_type(fs);
  cap.mutable_access_mode()->set_mode(m);
  return cap;
}

v1::VolumeCapability block_cap(mode::Mode m = mode::SINGLE_NODE_WRITER) {
  v1::VolumeCapability cap;
  cap.mutable_block();
  cap.mutable_access_mode()->set_mode(m);
  return cap;
}

v1::CreateVolumeRequest create_req(const std::string& name = "pvc-1") {
  v1::CreateVolumeRequest req;
  req.set_name(name);
  *req.add_volume_capabilities() = mount_cap("xfs");
  return req;
}

volume_record rec(const std::string& name, record_kind kind,
                  const content_source& source = {}) {
  volume_record r;
  r.name = name;
  r.kind = kind;
  r.source = source;
  r.backend = "block";
  return r;
}

} // namespace

// -- status -------------------------------------------------------------------------

TEST(csi_status, maps_every_error_code) {
  EXPECT_EQ(to_code(ec::invalid_argument), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(to_code(ec::not_found), StatusCode::NOT_FOUND);
  EXPECT_EQ(to_code(ec::already_exists), StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(to_code(ec::in_use), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(to_code(ec::failed_precondition), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(to_code(ec::out_of_range), StatusCode::OUT_OF_RANGE);
  EXPECT_EQ(to_code(ec::unsupported), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(to_code(ec::resource_exhausted), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(to_code(ec::timeout), StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(to_code(ec::unavailable), StatusCode::UNAVAILABLE);
  EXPECT_EQ(to_code(ec::persist_failure), StatusCode::INTERNAL);
  EXPECT_EQ(to_code(ec::backend_failure), StatusCode::INTERNAL);
  EXPECT_EQ(to_code(ec::internal), StatusCode::INTERNAL);
}

TEST(csi_status, keeps_the_message_and_maps_caf_errors) {
  auto st = to_status(make_error(ec::not_found, "no such volume: v1"));
  EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "no such volume: v1");
  EXPECT_TRUE(to_status(caf::error{}).ok());
  EXPECT_EQ(to_status(caf::make_error(caf::sec::request_timeout)).error_code(),
            StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(to_status(caf::make_error(caf::sec::request_receiver_down)).error_code(),
            StatusCode::UNAVAILABLE);
  EXPECT_EQ(to_status(caf::make_error(caf::sec::unexpected_message)).error_code(),
            StatusCode::INTERNAL);
}

// -- paths --------------------------------------------------------------------------

TEST(csi_codec, accepts_normalized_absolute_paths) {
  EXPECT_TRUE(check_path("/var/lib/kubelet/pods/u/volumes/kubernetes.io~csi/pvc-1/mount", "p").ok());
  EXPECT_TRUE(check_path("/a", "p").ok());
}

TEST(csi_codec, refuses_bad_paths_naming_the_field) {
  std::vector<std::string> bads{"",      "relative/path", "/", "/a/../b", "/a/./b",
                                "/a//b", "/a/b/",         "/..", "/a\nb",
                                std::string{"/a\0b", 4},  "/" + std::string(5000, 'x')};
  for (const auto& bad : bads) {
    auto st = check_path(bad, "target_path");
    EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << bad;
    EXPECT_NE(st.error_message().find("target_path"), std::string::npos) << st.error_message();
  }
}

// -- capabilities -------------------------------------------------------------------

TEST(csi_codec, accepts_single_node_mount_and_block_capabilities) {
  for (auto m : {mode::SINGLE_NODE_WRITER, mode::SINGLE_NODE_READER_ONLY,
                 mode::SINGLE_NODE_SINGLE_WRITER, mode::SINGLE_NODE_MULTI_WRITER}) {
    EXPECT_TRUE(check_capability(mount_cap("", m), "block").ok());
    EXPECT_TRUE(check_capability(mount_cap("xfs", m), "block").ok());
    EXPECT_TRUE(check_capability(mount_cap("ext4", m), "").ok());
    EXPECT_TRUE(check_capability(block_cap(m), "block").ok());
    EXPECT_TRUE(check_capability(block_cap(m), "").ok());
  }
}

TEST(csi_codec, refuses_multi_node_modes) {
  for (auto m : {mode::MULTI_NODE_READER_ONLY, mode::MULTI_NODE_SINGLE_WRITER,
                 mode::MULTI_NODE_MULTI_WRITER}) {
    auto st = check_capability(mount_cap("", m), "block");
    EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(st.error_message().find("MULTI_NODE"), std::string::npos) << st.error_message();
  }
}

TEST(csi_codec, refuses_unsupported_capabilities) {
  EXPECT_EQ(check_capability(mount_cap("btrfs"), "block").error_code(),
            StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(check_capability(block_cap(), "local").error_code(), StatusCode::INVALID_ARGUMENT);
  v1::VolumeCapability no_mode;
  no_mode.mutable_mount();
  EXPECT_EQ(check_capability(no_mode, "").error_code(), StatusCode::INVALID_ARGUMENT);
  v1::VolumeCapability no_type;
  no_type.mutable_access_mode()->set_mode(mode::SINGLE_NODE_WRITER);
  EXPECT_EQ(check_capability(no_type, "").error_code(), StatusCode::INVALID_ARGUMENT);
  auto group = mount_cap();
  group.mutable_mount()->set_volume_mount_group("1000");
  EXPECT_EQ(check_capability(group, "").error_code(), StatusCode::INVALID_ARGUMENT);
  auto flags = mount_cap();
  flags.mutable_mount()->add_mount_flags("noatime,nodev");
  EXPECT_EQ(check_capability(flags, "").error_code(), StatusCode::INVALID_ARGUMENT);
  google::protobuf::RepeatedPtrField<v1::VolumeCapability> none;
  EXPECT_EQ(check_capabilities(none, "").error_code(), StatusCode::INVALID_ARGUMENT);
}

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
  encode_stats(fs, &resp);
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
  encode_stats(blk, &resp2);
  ASSERT_EQ(resp2.usage_size(), 1);
  EXPECT_EQ(resp2.usage(0).total(), 100);
  EXPECT_TRUE(resp2.volume_condition().abnormal());
  EXPECT_EQ(resp2.volume_condition().message(), "device /dev/loop3 is gone");
}

// -- pagination ---------------------------------------------------------------------

TEST(csi_codec, paginates_by_name_tokens) {
  std::vector<std::string> names{"a", "b", "c", "d", "e"};
  page pg;
  ASSERT_TRUE(paginate(names, 0, "", pg).ok());
  EXPECT_EQ(pg.begin, 0u);
  EXPECT_EQ(pg.end, 5u);
  EXPECT_EQ(pg.next_token, "");
  ASSERT_TRUE(paginate(names, 2, "", pg).ok());
  EXPECT_EQ(pg.end, 2u);
  EXPECT_EQ(pg.next_token, "c");
  ASSERT_TRUE(paginate(names, 2, "c", pg).ok());
  EXPECT_EQ(pg.begin, 2u);
  EXPECT_EQ(pg.next_token, "e");
  ASSERT_TRUE(paginate(names, 2, "e", pg).ok());
  EXPECT_EQ(pg.begin, 4u);
  EXPECT_EQ(pg.end, 5u);
  EXPECT_EQ(pg.next_token, "");
  ASSERT_TRUE(paginate(names, 5, "", pg).ok());
  EXPECT_EQ(pg.next_token, "");
  EXPECT_EQ(paginate(names, 2, "invalid-token", pg).error_code(), StatusCode::ABORTED);
  EXPECT_EQ(paginate(names, -1, "", pg).error_code(), StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(paginate({}, 3, "", pg).ok());
  EXPECT_EQ(pg.begin, pg.end);
}

TEST(csi_codec, selects_and_filters_records) {
  std::vector<volume_record> recs{rec("v2", record_kind::volume),
                                  rec("s2", record_kind::snapshot, volume_source("v1")),
                                  rec("v1", record_kind::volume),
                                  rec("s1", record_kind::snapshot, volume_source("v2"))};
  auto vols = select_kind(recs, record_kind::volume);
  ASSERT_EQ(vols.size(), 2u);
  EXPECT_EQ(vols[0].name, "v1");
  EXPECT_EQ(vols[1].name, "v2");
  EXPECT_EQ(filter_snapshots(recs, "", "").size(), 2u);
  auto by_id = filter_snapshots(recs, "s2", "");
  ASSERT_EQ(by_id.size(), 1u);
  EXPECT_EQ(by_id[0].name, "s2");
  auto by_source = filter_snapshots(recs, "", "v2");
  ASSERT_EQ(by_source.size(), 1u);
  EXPECT_EQ(by_source[0].name, "s1");
  EXPECT_TRUE(filter_snapshots(recs, "s2", "v2").empty());
  EXPECT_TRUE(filter_snapshots(recs, "v1", "").empty());
}

// -- node ---------------------------------------------------------------------------

TEST(csi_codec, decodes_stage) {
  v1::NodeStageVolumeRequest req;
  req.set_volume_id("pvc-1");
  req.set_staging_target_path("/var/lib/kubelet/plugins/x/globalmount");
  stage_request out;
  EXPECT_EQ(decode_stage(req, out).error_code(), StatusCode::INVALID_ARGUMENT); // no capability
  auto cap = mount_cap("ext4");
  cap.mutable_mount()->add_mount_flags("noatime");
  *req.mutable_volume_capability() = cap;
  ASSERT_TRUE(decode_stage(req, out).ok());
  EXPECT_EQ(out.staging_path, "/var/lib/kubelet/plugins/x/globalmount");
  EXPECT_FALSE(out.block);
  EXPECT_EQ(out.fs_type, "ext4");
  EXPECT_EQ(out.flags, std::vector<std::string>{"noatime"});
  *req.mutable_volume_capability() = block_cap();
  ASSERT_TRUE(decode_stage(req, out).ok());
  EXPECT_TRUE(out.block);
  req.set_staging_target_path("relative");
  EXPECT_EQ(decode_stage(req, out).error_code(), StatusCode::INVALID_ARGUMENT);
  req.set_staging_target_path("/s");
  req.clear_volume_id();
  EXPECT_EQ(decode_stage(req, out).error_code(), StatusCode::INVALID_ARGUMENT);
}

TEST(csi_codec, decodes_publish) {
  v1::NodePublishVolumeRequest req;
  req.set_volume_id("pvc-1");
  req.set_target_path("/pods/u/mount");
  *req.mutable_volume_capability() = mount_cap("", mode::SINGLE_NODE_READER_ONLY);
  publish_request out;
  auto st = decode_publish(req, out);
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT); // staging path is required
  EXPECT_NE(st.error_message().find("staging_target_path"), std::string::npos);
  req.set_staging_target_path("/staging/pvc-1");
  ASSERT_TRUE(decode_publish(req, out).ok());
  EXPECT_EQ(out.target, "/pods/u/mount");
  EXPECT_EQ(out.staging_path, "/staging/pvc-1");
  EXPECT_TRUE(out.how.readonly); // from the access mode
  EXPECT_FALSE(out.how.block);
  *req.mutable_volume_capability() = block_cap();
  req.set_readonly(false);
  ASSERT_TRUE(decode_publish(req, out).ok());
  EXPECT_TRUE(out.how.block);
  EXPECT_FALSE(out.how.readonly);
  req.set_target_path("/a/../b");
  EXPECT_EQ(decode_publish(req, out).error_code(), StatusCode::INVALID_ARGUMENT);
}

// -- endpoint -----------------------------------------------------------------------

TEST(csi_codec, parses_endpoints) {
  EXPECT_EQ(*csi_socket_path("unix:///run/csi.sock"), "/run/csi.sock");
  EXPECT_EQ(*csi_socket_path("unix:/run/csi.sock"), "/run/csi.sock");
  EXPECT_EQ(*csi_socket_path("/run/csi.sock"), "/run/csi.sock");
  EXPECT_FALSE(csi_socket_path("tcp://127.0.0.1:10000"));
  EXPECT_FALSE(csi_socket_path("unix://relative.sock"));
  EXPECT_FALSE(csi_socket_path("/" + std::string(200, 'x')));
}
