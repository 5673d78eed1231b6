// The codec side of ControllerModifyVolume and of CreateVolume's mutable_parameters:
// what decode_modify and decode_create_volume accept, what they refuse (each refusal
// INVALID_ARGUMENT naming the field and, for a bound, the bound), and what they hand on.

#include <string>

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

using proto_map = google::protobuf::Map<std::string, std::string>;

/// `n` entries k0..k(n-1).
proto_map entries(size_t n) {
  proto_map out;
  for (size_t i = 0; i < n; ++i) {
    out["k" + std::to_string(i)] = "v";
  }
  return out;
}

v1::ControllerModifyVolumeRequest modify_req(const std::string& id, const proto_map& params) {
  v1::ControllerModifyVolumeRequest req;
  req.set_volume_id(id);
  *req.mutable_mutable_parameters() = params;
  return req;
}

v1::CreateVolumeRequest create_req(const proto_map& mutable_params) {
  v1::CreateVolumeRequest req;
  req.set_name("pvc-1");
  auto* cap = req.add_volume_capabilities();
  cap->mutable_mount()->set_fs_type("xfs");
  cap->mutable_access_mode()->set_mode(mode::SINGLE_NODE_WRITER);
  (*req.mutable_parameters())["backend"] = "block";
  *req.mutable_mutable_parameters() = mutable_params;
  return req;
}

using test::refused;

const std::string max_options = std::to_string(limits::max_options);

} // namespace

// -- decode_modify ------------------------------------------------------------------

TEST(csi_modify_codec, decodes_a_modify_of_csi_parameters_without_a_size) {
  proto_map params;
  params["readAheadKB"] = "512";
  params["directIO"] = "on";
  modify_request out;
  out.required_bytes = 7; // overwritten
  ASSERT_TRUE(decode_modify(modify_req("pvc-1", params), out).ok());
  EXPECT_EQ(out.required_bytes, 0u);
  EXPECT_EQ(out.parameters, (option_map{{"readAheadKB", "512"}, {"directIO", "on"}}));
  EXPECT_EQ(out.owner, record_owner::csi);
}

TEST(csi_modify_codec, modify_needs_a_volume_id_and_an_empty_map_asks_for_nothing) {
  modify_request out;
  proto_map one;
  one["readAheadKB"] = "512";
  EXPECT_TRUE(refused(decode_modify(modify_req("", one), out), {"volume_id", "required"}));
  out.parameters = {{"stale", "1"}};
  ASSERT_TRUE(decode_modify(modify_req("pvc-1", {}), out).ok());
  EXPECT_TRUE(out.parameters.empty());
  EXPECT_EQ(out.required_bytes, 0u);
}

TEST(csi_modify_codec, modify_parameters_are_bounded) {
  modify_request out;
  EXPECT_TRUE(decode_modify(modify_req("pvc-1", entries(limits::max_options)), out).ok());
  EXPECT_EQ(out.parameters.size(), limits::max_options);
  EXPECT_TRUE(refused(decode_modify(modify_req("pvc-1", entries(limits::max_options + 1)), out),
                      {"mutable_parameters", max_options}));

  proto_map long_key;
  long_key[std::string(limits::max_option_key_bytes + 1, 'k')] = "1";
  EXPECT_TRUE(refused(decode_modify(modify_req("pvc-1", long_key), out),
                      {"mutable_parameters key", std::to_string(limits::max_option_key_bytes)}));
  proto_map key_at_bound;
  key_at_bound[std::string(limits::max_option_key_bytes, 'k')] = "1";
  EXPECT_TRUE(decode_modify(modify_req("pvc-1", key_at_bound), out).ok());

  proto_map long_value;
  long_value["readAheadKB"] = std::string(limits::max_option_value_bytes + 1, 'v');
  EXPECT_TRUE(refused(decode_modify(modify_req("pvc-1", long_value), out),
                      {"mutable_parameters", "readAheadKB",
                       std::to_string(limits::max_option_value_bytes)}));

  proto_map empty_key;
  empty_key[""] = "1";
  EXPECT_TRUE(refused(decode_modify(modify_req("pvc-1", empty_key), out),
                      {"mutable_parameters", "empty key"}));
}

// Unlike the parameters, whose `backend` and "csi.storage.k8s.io/" keys the record
// does not keep, every mutable parameter is kept: each counts toward the bound, or the
// bound on a record's size would not hold.
TEST(csi_modify_codec, every_mutable_parameter_counts_toward_the_bound) {
  auto params = entries(limits::max_options);
  params["backend"] = "local";
  EXPECT_TRUE(check_parameters(params, "parameters").ok()) << "backend is not kept there";
  EXPECT_TRUE(refused(check_mutable_parameters(params, "mutable_parameters"),
                      {"mutable_parameters", max_options}));
  params.erase("backend");
  params["csi.storage.k8s.io/pvc/name"] = "claim";
  EXPECT_TRUE(refused(check_mutable_parameters(params, "mutable_parameters"),
                      {"mutable_parameters", max_options}));
  modify_request out;
  EXPECT_TRUE(refused(decode_modify(modify_req("pvc-1", params), out), {max_options}));
}

// -- CreateVolume's mutable_parameters ------------------------------------------------

TEST(csi_modify_codec, create_keeps_mutable_parameters_whole_and_apart) {
  proto_map params;
  params["readAheadKB"] = "256";
  params["csi.storage.k8s.io/odd"] = "kept"; // not the CO's here: the backend judges it
  volume_spec spec;
  ASSERT_TRUE(decode_create_volume(create_req(params), env(), spec).ok());
  EXPECT_EQ(spec.mutable_parameters,
            (option_map{{"readAheadKB", "256"}, {"csi.storage.k8s.io/odd", "kept"}}));
  EXPECT_EQ(spec.parameters, (option_map{{"fsType", "xfs"}})) << "no mutable key among them";

  volume_spec none;
  ASSERT_TRUE(decode_create_volume(create_req({}), env(), none).ok());
  EXPECT_TRUE(none.mutable_parameters.empty()) << "the field is optional";
}

TEST(csi_modify_codec, create_mutable_parameters_are_bounded) {
  volume_spec spec;
  EXPECT_TRUE(decode_create_volume(create_req(entries(limits::max_options)), env(), spec).ok());
  EXPECT_TRUE(refused(decode_create_volume(create_req(entries(limits::max_options + 1)), env(),
                                           spec),
                      {"mutable_parameters", max_options}));
  proto_map long_key;
  long_key[std::string(limits::max_option_key_bytes + 1, 'k')] = "1";
  EXPECT_TRUE(refused(decode_create_volume(create_req(long_key), env(), spec),
                      {"mutable_parameters key"}));
  proto_map long_value;
  long_value["readAheadKB"] = std::string(limits::max_option_value_bytes + 1, 'v');
  EXPECT_TRUE(refused(decode_create_volume(create_req(long_value), env(), spec),
                      {"mutable_parameters", "readAheadKB"}));
}
