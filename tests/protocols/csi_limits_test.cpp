// The bounds of core/limits.hpp at the CSI adapter: every input that would grow a
// record is refused over its bound with INVALID_ARGUMENT naming the input and the
// bound, and accepted at the bound.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/limits.hpp"
#include "protocols/csi/csi_codec.hpp"
#include "tests/protocols/grpc_status_matchers.hpp"

using namespace berth;
using namespace berth::csi;
using grpc::StatusCode;

namespace {

using mode = v1::VolumeCapability::AccessMode;

codec_env env() {
  codec_env e;
  e.node_id = "node-1";
  e.backends = {"block", "local"};
  return e;
}

v1::VolumeCapability mount_cap(const std::string& fs = "") {
  v1::VolumeCapability cap;
  cap.mutable_mount()->set_fs_type(fs);
  cap.mutable_access_mode()->set_mode(mode::SINGLE_NODE_WRITER);
  return cap;
}

/// A CreateVolume with `n` parameters k0..k(n-1) and a capability of `fs`.
v1::CreateVolumeRequest create_with(size_t n, const std::string& fs = "") {
  v1::CreateVolumeRequest req;
  req.set_name("pvc-1");
  *req.add_volume_capabilities() = mount_cap(fs);
  for (size_t i = 0; i < n; ++i) {
    (*req.mutable_parameters())["k" + std::to_string(i)] = "v";
  }
  return req;
}

using test::refused;

const std::string max_options = std::to_string(limits::max_options);

} // namespace

// -- parameters ---------------------------------------------------------------------

TEST(csi_limits, create_volume_parameters_at_the_bound_are_accepted) {
  volume_spec spec;
  auto st = decode_create_volume(create_with(limits::max_options), env(), spec);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(spec.parameters.size(), limits::max_options);
  // The CO's own parameters and "backend" are not kept, so they do not count.
  auto req = create_with(limits::max_options);
  (*req.mutable_parameters())["backend"] = "block";
  (*req.mutable_parameters())["csi.storage.k8s.io/pvc/name"] = "claim";
  (*req.mutable_parameters())["csi.storage.k8s.io/pvc/namespace"] = "default";
  (*req.mutable_parameters())["csi.storage.k8s.io/pv/name"] = "pvc-1";
  st = decode_create_volume(req, env(), spec);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(spec.parameters.size(), limits::max_options);
  // fsType taken from the capability is kept, so it counts.
  st = decode_create_volume(create_with(limits::max_options - 1, "xfs"), env(), spec);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(spec.parameters.size(), limits::max_options);
}

TEST(csi_limits, create_volume_parameters_over_the_bound_are_refused) {
  volume_spec spec;
  EXPECT_TRUE(refused(decode_create_volume(create_with(limits::max_options + 1), env(), spec),
                      {"parameters", max_options}));
  EXPECT_TRUE(refused(decode_create_volume(create_with(limits::max_options, "xfs"), env(), spec),
                      {"parameters", max_options}))
    << "the fsType from the capability makes one more";
}

TEST(csi_limits, parameter_keys_and_values_are_bounded) {
  volume_spec spec;
  auto at = create_with(1);
  (*at.mutable_parameters())[std::string(limits::max_option_key_bytes, 'k')] =
    std::string(limits::max_option_value_bytes, 'v');
  auto st = decode_create_volume(at, env(), spec);
  ASSERT_TRUE(st.ok()) << st.error_message();

  auto long_key = create_with(1);
  (*long_key.mutable_parameters())[std::string(limits::max_option_key_bytes + 1, 'k')] = "v";
  EXPECT_TRUE(refused(decode_create_volume(long_key, env(), spec),
                      {"parameters", "key", std::to_string(limits::max_option_key_bytes)}));

  auto long_value = create_with(1);
  (*long_value.mutable_parameters())["big"] = std::string(limits::max_option_value_bytes + 1, 'v');
  EXPECT_TRUE(refused(decode_create_volume(long_value, env(), spec),
                      {"parameters", "\"big\"", std::to_string(limits::max_option_value_bytes)}));

  // Also the CO's reserved ones, which are read before they are dropped.
  auto reserved = create_with(1);
  (*reserved.mutable_parameters())["csi.storage.k8s.io/pvc/name"] =
    std::string(limits::max_option_value_bytes + 1, 'v');
  EXPECT_TRUE(refused(decode_create_volume(reserved, env(), spec), {"parameters"}));

  auto empty_key = create_with(1);
  (*empty_key.mutable_parameters())[""] = "v";
  EXPECT_TRUE(refused(decode_create_volume(empty_key, env(), spec), {"parameters", "empty"}));
}

TEST(csi_limits, check_parameters_serves_any_parameter_map) {
  google::protobuf::Map<std::string, std::string> params;
  for (size_t i = 0; i < limits::max_options; ++i) {
    params["k" + std::to_string(i)] = "v";
  }
  EXPECT_TRUE(check_parameters(params, "mutable_parameters").ok());
  params["one-more"] = "v";
  EXPECT_TRUE(refused(check_parameters(params, "mutable_parameters"),
                      {"mutable_parameters", max_options}));
}

TEST(csi_limits, create_snapshot_parameters_are_bounded) {
  v1::CreateSnapshotRequest req;
  req.set_name("snap-1");
  req.set_source_volume_id("pvc-1");
  for (size_t i = 0; i < limits::max_options; ++i) {
    (*req.mutable_parameters())["k" + std::to_string(i)] = "v";
  }
  volume_spec spec;
  auto st = decode_create_snapshot(req, env(), spec);
  ASSERT_TRUE(st.ok()) << st.error_message();
  (*req.mutable_parameters())["one-more"] = "v";
  EXPECT_TRUE(refused(decode_create_snapshot(req, env(), spec), {"parameters", max_options}));
}

// -- names --------------------------------------------------------------------------

TEST(csi_limits, volume_and_snapshot_names_are_bounded) {
  const std::string at(limits::max_name_bytes, 'n');
  const std::string over(limits::max_name_bytes + 1, 'n');
  const auto bound = std::to_string(limits::max_name_bytes);
  volume_spec spec;
  auto req = create_with(0);
  req.set_name(at);
  auto st = decode_create_volume(req, env(), spec);
  EXPECT_TRUE(st.ok()) << st.error_message();
  req.set_name(over);
  EXPECT_TRUE(refused(decode_create_volume(req, env(), spec), {"name", bound}));

  v1::CreateSnapshotRequest snap;
  snap.set_source_volume_id("pvc-1");
  snap.set_name(at);
  st = decode_create_snapshot(snap, env(), spec);
  EXPECT_TRUE(st.ok()) << st.error_message();
  snap.set_name(over);
  EXPECT_TRUE(refused(decode_create_snapshot(snap, env(), spec), {"name", bound}));
}

// -- mount flags --------------------------------------------------------------------

TEST(csi_limits, mount_flags_per_capability_are_bounded) {
  auto cap = mount_cap();
  for (size_t i = 0; i < limits::max_mount_flags; ++i) {
    cap.mutable_mount()->add_mount_flags("noatime");
  }
  auto st = check_capability(cap, "block");
  EXPECT_TRUE(st.ok()) << st.error_message();
  cap.mutable_mount()->add_mount_flags("noatime");
  EXPECT_TRUE(refused(check_capability(cap, "block"),
                      {"mount_flags", std::to_string(limits::max_mount_flags)}));

  v1::NodeStageVolumeRequest stage;
  stage.set_volume_id("pvc-1");
  stage.set_staging_target_path("/staging/pvc-1");
  *stage.mutable_volume_capability() = cap;
  stage_request out;
  EXPECT_TRUE(refused(decode_stage(stage, out), {"mount_flags"}));

  v1::NodePublishVolumeRequest pub;
  pub.set_volume_id("pvc-1");
  pub.set_staging_target_path("/staging/pvc-1");
  pub.set_target_path("/pods/u/mount");
  *pub.mutable_volume_capability() = cap;
  publish_request pout;
  EXPECT_TRUE(refused(decode_publish(pub, pout), {"mount_flags"}));
}

TEST(csi_limits, mount_flag_length_is_bounded) {
  auto cap = mount_cap();
  cap.mutable_mount()->add_mount_flags(std::string(limits::max_mount_flag_bytes, 'f'));
  auto st = check_capability(cap, "block");
  EXPECT_TRUE(st.ok()) << st.error_message();
  cap.mutable_mount()->add_mount_flags(std::string(limits::max_mount_flag_bytes + 1, 'f'));
  EXPECT_TRUE(refused(check_capability(cap, "block"),
                      {"mount flag", std::to_string(limits::max_mount_flag_bytes)}));
}

TEST(csi_limits, mount_flags_with_control_characters_are_refused) {
  for (const auto& bad :
       std::vector<std::string>{"noatime\n", "a\tb", std::string{"x\0y", 3}, "\x7f"}) {
    auto cap = mount_cap();
    cap.mutable_mount()->add_mount_flags(bad);
    EXPECT_TRUE(refused(check_capability(cap, "block"), {"mount flag", "control"}));
  }
}

// -- paths --------------------------------------------------------------------------

TEST(csi_limits, path_length_is_bounded) {
  // "/" + components of 200 bytes, cut to exactly n bytes.
  auto path_of = [](size_t n) {
    std::string p;
    while (p.size() < n) {
      p += "/" + std::string(200, 'p');
    }
    p.resize(n);
    if (p.back() == '/') {
      p.back() = 'p';
    }
    return p;
  };
  ASSERT_EQ(path_of(limits::max_path_bytes).size(), limits::max_path_bytes);
  auto st = check_path(path_of(limits::max_path_bytes), "target_path");
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_TRUE(refused(check_path(path_of(limits::max_path_bytes + 1), "target_path"),
                      {"target_path", std::to_string(limits::max_path_bytes)}));

  v1::NodeStageVolumeRequest stage;
  stage.set_volume_id("pvc-1");
  stage.set_staging_target_path(path_of(limits::max_path_bytes + 1));
  *stage.mutable_volume_capability() = mount_cap();
  stage_request out;
  EXPECT_TRUE(refused(decode_stage(stage, out), {"staging_target_path"}));
}

TEST(csi_limits, paths_with_control_characters_are_refused) {
  for (const auto& bad : std::vector<std::string>{"/a\nb", "/a\tb", std::string{"/a\0b", 4},
                                                  "/a\x1b[0m", "/a\x7f"}) {
    EXPECT_TRUE(refused(check_path(bad, "staging_target_path"),
                        {"staging_target_path", "control"}));
  }
}
