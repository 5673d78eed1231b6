// The CSI codec: status codes, paths and volume capabilities.
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
