// ControllerModifyVolume, the MODIFY_VOLUME capability, ControllerExpandVolume through
// the registry's modify, and CreateVolume's mutable_parameters, over a real gRPC
// channel against the map-backed registry stand-in (csi_server_fixture.hpp). What the
// volume actor does with a modify (merging, validate_mutable, the backend) is tested
// in tests/actors.

#include <string>

#include <gtest/gtest.h>

#include "core/limits.hpp"
#include "tests/protocols/csi_server_fixture.hpp"
#include "tests/protocols/grpc_status_matchers.hpp"

using namespace berth;
namespace v1 = ::csi::v1;
using grpc::StatusCode;
using test::refused;

namespace {

constexpr int64_t mib = 1 << 20;

class csi_modify_server_test : public test::csi_server_fixture {
protected:
  grpc::Status modify(const std::string& id, const option_map& params) {
    v1::ControllerModifyVolumeRequest req;
    req.set_volume_id(id);
    for (const auto& [key, value] : params) {
      (*req.mutable_mutable_parameters())[key] = value;
    }
    v1::ControllerModifyVolumeResponse resp;
    grpc::ClientContext c;
    return v1::Controller::NewStub(channel)->ControllerModifyVolume(ctx(c), req, &resp);
  }

  grpc::Status expand(const std::string& id, int64_t bytes, v1::ControllerExpandVolumeResponse* resp,
                      bool block = false) {
    v1::ControllerExpandVolumeRequest req;
    req.set_volume_id(id);
    req.mutable_capacity_range()->set_required_bytes(bytes);
    if (block) {
      req.mutable_volume_capability()->mutable_block();
      req.mutable_volume_capability()->mutable_access_mode()->set_mode(
        v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    }
    grpc::ClientContext c;
    return v1::Controller::NewStub(channel)->ControllerExpandVolume(ctx(c), req, resp);
  }

  grpc::Status create_with_mutable(const std::string& name, const option_map& mutable_params,
                                   v1::CreateVolumeResponse* resp) {
    v1::CreateVolumeRequest req;
    req.set_name(name);
    auto* cap = req.add_volume_capabilities();
    cap->mutable_mount()->set_fs_type("xfs");
    cap->mutable_access_mode()->set_mode(v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    req.mutable_capacity_range()->set_required_bytes(mib);
    for (const auto& [key, value] : mutable_params) {
      (*req.mutable_mutable_parameters())[key] = value;
    }
    grpc::ClientContext c;
    return v1::Controller::NewStub(channel)->CreateVolume(ctx(c), req, resp);
  }

  /// `max_options` + `extra` distinct keys.
  static option_map many(size_t extra) {
    option_map out;
    for (size_t i = 0; i < limits::max_options + extra; ++i) {
      out["k" + std::to_string(i)] = "v";
    }
    return out;
  }
};

} // namespace

// -- the capability ------------------------------------------------------------------

TEST_F(csi_modify_server_test, advertises_modify_volume) {
  v1::ControllerGetCapabilitiesResponse caps;
  grpc::ClientContext c;
  ASSERT_TRUE(v1::Controller::NewStub(channel)->ControllerGetCapabilities(ctx(c), {}, &caps).ok());
  bool found = false;
  for (const auto& cap : caps.capabilities()) {
    found = found || cap.rpc().type() == v1::ControllerServiceCapability::RPC::MODIFY_VOLUME;
  }
  EXPECT_TRUE(found) << "MODIFY_VOLUME is missing: external-resizer would never send "
                        "ControllerModifyVolume";
}

// -- ControllerModifyVolume ---------------------------------------------------------------

TEST_F(csi_modify_server_test, modify_sends_one_modify_of_the_parameters_and_answers_empty) {
  v1::CreateVolumeResponse created;
  ASSERT_TRUE(create_volume("pvc-1", &created).ok());
  auto st = modify("pvc-1", {{"readAheadKB", "512"}, {"directIO", "on"}});
  ASSERT_TRUE(st.ok()) << st.error_code() << ": " << st.error_message();
  ASSERT_EQ(mods->calls.size(), 1u);
  const auto& [name, req] = mods->calls.front();
  EXPECT_EQ(name, "pvc-1");
  EXPECT_EQ(req.required_bytes, 0u) << "a modify alone does not change the size";
  EXPECT_EQ(req.parameters, (option_map{{"readAheadKB", "512"}, {"directIO", "on"}}));
  EXPECT_EQ(req.owner, record_owner::csi) << "CSI modifies only CSI's records";
  EXPECT_EQ(recs->at("pvc-1").mutable_parameters.at("readAheadKB"), "512");
}

TEST_F(csi_modify_server_test, modify_answers_the_volumes_refusal_with_its_code) {
  v1::CreateVolumeResponse created;
  ASSERT_TRUE(create_volume("pvc-1", &created).ok());
  // The cooldown of a backend (docs/design.md, "Expand and modify coalesce into one
  // call"): retryable, and the message says when.
  mods->refuse = make_error(ec::resource_exhausted,
                            "volume pvc-1 was modified 10 s ago; it may be modified again in 50 s");
  auto st = modify("pvc-1", {{"readAheadKB", "512"}});
  EXPECT_EQ(st.error_code(), StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
  EXPECT_NE(st.error_message().find("again in 50 s"), std::string::npos) << st.error_message();
  // An unknown or immutable key is refused by the backend's validate_mutable in the
  // volume actor, not here; the adapter passes its answer on.
  mods->refuse = make_error(ec::invalid_argument, "parameter fsType of volume pvc-1 is immutable");
  st = modify("pvc-1", {{"fsType", "ext4"}});
  EXPECT_TRUE(refused(st, "fsType"));
  EXPECT_EQ(mods->calls.size(), 2u) << "both reached the registry";
}

TEST_F(csi_modify_server_test, modify_of_an_unknown_volume_is_not_found) {
  auto st = modify("pvc-none", {{"readAheadKB", "512"}});
  EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << st.error_message();
  // An ID no berth volume can have is not found without asking (as for the other RPCs).
  st = modify("not/a-name", {{"readAheadKB", "512"}});
  EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << st.error_message();
  EXPECT_EQ(mods->calls.size(), 1u);
  // The volume comes before the content of the request.
  st = modify("pvc-none", many(1));
  EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << st.error_message();
  st = modify("pvc-none", {});
  EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << st.error_message();
  EXPECT_EQ(mods->calls.size(), 1u);
}

TEST_F(csi_modify_server_test, modify_with_no_parameters_changes_nothing_and_answers_ok) {
  v1::CreateVolumeResponse created;
  ASSERT_TRUE(create_volume("pvc-1", &created).ok());
  auto st = modify("pvc-1", {});
  EXPECT_TRUE(st.ok()) << st.error_code() << ": " << st.error_message();
  EXPECT_TRUE(mods->calls.empty()) << "nothing to modify reaches no volume";
}

TEST_F(csi_modify_server_test, modify_refuses_bad_input_before_any_message) {
  v1::CreateVolumeResponse created;
  ASSERT_TRUE(create_volume("pvc-1", &created).ok());
  EXPECT_TRUE(refused(modify("", {{"readAheadKB", "512"}}), "volume_id"));
  EXPECT_TRUE(refused(modify("pvc-1", many(1)), "mutable_parameters"));
  EXPECT_TRUE(refused(modify("pvc-1", many(1)), std::to_string(limits::max_options)));
  std::string long_key(limits::max_option_key_bytes + 1, 'k');
  EXPECT_TRUE(refused(modify("pvc-1", {{long_key, "1"}}), "mutable_parameters key"));
  EXPECT_TRUE(refused(modify("pvc-1", {{"", "1"}}), "empty key"));
  std::string long_value(limits::max_option_value_bytes + 1, 'v');
  EXPECT_TRUE(refused(modify("pvc-1", {{"readAheadKB", long_value}}), "readAheadKB"));
  EXPECT_TRUE(mods->calls.empty()) << "nothing malformed reaches the registry";
  // At the bound: accepted and sent.
  EXPECT_TRUE(modify("pvc-1", many(0)).ok());
  EXPECT_EQ(mods->calls.size(), 1u);
}

// -- ControllerExpandVolume is a modify of the size ------------------------------------

TEST_F(csi_modify_server_test, expand_sends_a_modify_of_the_size_and_answers_the_records_capacity) {
  v1::CreateVolumeResponse created;
  ASSERT_TRUE(create_volume("pvc-1", &created).ok());
  v1::ControllerExpandVolumeResponse expanded;
  auto st = expand("pvc-1", 2 * mib, &expanded);
  ASSERT_TRUE(st.ok()) << st.error_code() << ": " << st.error_message();
  ASSERT_EQ(mods->calls.size(), 1u);
  const auto& [name, req] = mods->calls.front();
  EXPECT_EQ(name, "pvc-1");
  EXPECT_EQ(req.required_bytes, uint64_t{2 * mib});
  EXPECT_TRUE(req.parameters.empty());
  EXPECT_EQ(req.owner, record_owner::csi);
  EXPECT_EQ(expanded.capacity_bytes(), 2 * mib) << "the capacity of the record modify returns";
  EXPECT_TRUE(expanded.node_expansion_required()) << "a filesystem grows on the node";

  // A raw block volume needs no node expansion; the capacity is the record's, which
  // may exceed the request (here it is already 2 MiB).
  v1::ControllerExpandVolumeResponse block;
  ASSERT_TRUE(expand("pvc-1", mib + 1, &block, true).ok());
  EXPECT_EQ(block.capacity_bytes(), 2 * mib);
  EXPECT_FALSE(block.node_expansion_required());
}

TEST_F(csi_modify_server_test, expand_answers_the_volumes_refusal_with_its_code) {
  v1::CreateVolumeResponse created;
  ASSERT_TRUE(create_volume("pvc-1", &created).ok());
  mods->refuse = make_error(ec::out_of_range, "volume pvc-1 has 1048576 bytes; shrinking is not "
                                              "supported");
  v1::ControllerExpandVolumeResponse expanded;
  EXPECT_EQ(expand("pvc-1", 1024, &expanded).error_code(), StatusCode::OUT_OF_RANGE);
  mods->refuse = make_error(ec::resource_exhausted, "volume pvc-1 may be modified again in 5 s");
  EXPECT_EQ(expand("pvc-1", 4 * mib, &expanded).error_code(), StatusCode::RESOURCE_EXHAUSTED);
}

// -- CreateVolume's mutable_parameters -----------------------------------------------------

TEST_F(csi_modify_server_test, create_keeps_mutable_parameters_apart_from_the_parameters) {
  v1::CreateVolumeResponse created;
  auto st = create_with_mutable("pvc-1", {{"readAheadKB", "256"}}, &created);
  ASSERT_TRUE(st.ok()) << st.error_message();
  const auto& rec = recs->at("pvc-1");
  EXPECT_EQ(rec.mutable_parameters, (option_map{{"readAheadKB", "256"}}));
  EXPECT_EQ(rec.options.count("readAheadKB"), 0u) << "not a StorageClass parameter";
  EXPECT_EQ(created.volume().volume_context().count("readAheadKB"), 0u)
    << "volume_context SHALL NOT be mutable";
}

TEST_F(csi_modify_server_test, create_refuses_bad_mutable_parameters) {
  v1::CreateVolumeResponse created;
  EXPECT_TRUE(refused(create_with_mutable("pvc-1", many(1), &created), "mutable_parameters"));
  std::string long_key(limits::max_option_key_bytes + 1, 'k');
  EXPECT_TRUE(refused(create_with_mutable("pvc-1", {{long_key, "1"}}, &created),
                      "mutable_parameters key"));
  EXPECT_EQ(recs->count("pvc-1"), 0u) << "nothing malformed reaches the registry";
  EXPECT_TRUE(create_with_mutable("pvc-1", many(0), &created).ok()) << "at the bound";
}
