// The CSI codec: pagination, the node's requests and endpoints.
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
  auto recs =
    share({rec("v2", record_kind::volume), rec("s2", record_kind::snapshot, volume_source("v1")),
           rec("v1", record_kind::volume), rec("s1", record_kind::snapshot, volume_source("v2"))});
  auto vols = select_kind(recs, record_kind::volume);
  ASSERT_EQ(vols.size(), 2u);
  EXPECT_EQ(vols[0]->name, "v1");
  EXPECT_EQ(vols[1]->name, "v2");
  EXPECT_EQ(filter_snapshots(recs, "", "").size(), 2u);
  auto by_id = filter_snapshots(recs, "s2", "");
  ASSERT_EQ(by_id.size(), 1u);
  EXPECT_EQ(by_id[0]->name, "s2");
  auto by_source = filter_snapshots(recs, "", "v2");
  ASSERT_EQ(by_source.size(), 1u);
  EXPECT_EQ(by_source[0]->name, "s1");
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
