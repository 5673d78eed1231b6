#pragma once

// The CSI server in one process, for the gRPC tests: a real gRPC server on a unix
// socket, a real actor system, and a map-backed registry stand-in; the client is a
// real gRPC channel, as kubelet and the sidecars use. csi_server_test.cpp and
// csi_modify_server_test.cpp share it.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "actors/csi_rules.hpp"
#include "core/errors.hpp"
#include "csi.grpc.pb.h"
#include "protocols/csi/csi_server.hpp"
#include "tests/protocols/inert_backend.hpp"
#include "tests/protocols/test_util.hpp"

namespace berth::test {

namespace v1 = ::csi::v1;

/// Reports a fixed capacity; nothing else is called by the CSI adapter.
class capacity_backend : public inert_backend {
public:
  caf::expected<uint64_t> available_capacity() const override { return uint64_t{12345}; }
};

using record_map = std::map<std::string, volume_record>;

/// What the stand-in was asked to modify, in order; `refuse`, when set, is the
/// answer to every modify instead (the volume actor's refusal or the backend's error).
struct modify_log {
  std::vector<std::pair<std::string, modify_request>> calls;
  caf::error refuse;
};

/// A registry keeping records in a map; answers the CSI messages the adapter sends.
/// A modify is logged and applied as the volume actor would on success: the
/// capacity grows to required_bytes, the parameters are united into the record's.
inline caf::behavior fake_csi_registry(caf::event_based_actor*, std::shared_ptr<record_map> recs,
                                       std::shared_ptr<modify_log> mods) {
  auto missing = [](const std::string& name) {
    return make_error(ec::not_found, "no such volume: " + name);
  };
  auto create = [recs](const std::string& name, const volume_spec& spec) {
    if (auto it = recs->find(name); it != recs->end()) {
      return it->second; // the real actor checks compatibility; the adapter checks kind
    }
    // The registry's record, with a fixed time the tests can compare.
    auto rec = make_csi_record(name, spec, spec.required_bytes);
    rec.created_at = "2026-11-30T18:00:00Z";
    recs->emplace(name, rec);
    return rec;
  };
  auto remove = [recs, missing](const std::string& name, record_owner owner,
                                record_kind kind) -> caf::expected<atom::ok> {
    auto it = recs->find(name);
    if (it == recs->end() || owner_of(it->second) != owner || it->second.kind != kind) {
      return missing(name);
    }
    recs->erase(it);
    return atom::ok_v;
  };
  return {
    [create](atom::create, const std::string& name,
             const volume_spec& spec) -> caf::result<volume_record> { return create(name, spec); },
    // The adapter sends creations and removals straight, with a direct_reply.
    [create](atom::create, const std::string& name, const volume_spec& spec,
             direct_reply<volume_record>& reply) { reply.deliver(create(name, spec)); },
    [recs, missing](atom::get, const std::string& name,
                    record_owner owner) -> caf::result<volume_record> {
      auto it = recs->find(name);
      if (it == recs->end() || owner_of(it->second) != owner) {
        return missing(name);
      }
      return it->second;
    },
    [remove](atom::remove, const std::string& name, record_owner owner,
             record_kind kind) -> caf::result<atom::ok> { return remove(name, owner, kind); },
    [remove](atom::remove, const std::string& name, record_owner owner, record_kind kind,
             direct_reply<atom::ok>& reply) { reply.deliver(remove(name, owner, kind)); },
    [recs](atom::list, record_owner owner) {
      std::vector<volume_record> out;
      for (const auto& [name, rec] : *recs) {
        if (owner_of(rec) == owner) {
          out.push_back(rec);
        }
      }
      return share(std::move(out));
    },
    [recs, missing](atom::stage, const std::string& name,
                    const stage_request& req) -> caf::result<atom::ok> {
      auto it = recs->find(name);
      if (it == recs->end()) {
        return missing(name);
      }
      it->second.staging_path = req.staging_path;
      return atom::ok_v;
    },
    [recs, missing](atom::unstage, const std::string& name,
                    const std::string&) -> caf::result<atom::ok> {
      if (recs->count(name) == 0) {
        return missing(name);
      }
      return atom::ok_v;
    },
    [recs, missing](atom::publish, const std::string& name,
                    const publish_request& req) -> caf::result<atom::ok> {
      auto it = recs->find(name);
      if (it == recs->end()) {
        return missing(name);
      }
      if (it->second.staging_path != req.staging_path) {
        return make_error(ec::failed_precondition, "volume " + name + " is not staged at "
                                                     + req.staging_path);
      }
      return atom::ok_v;
    },
    [recs, mods, missing](atom::modify, const std::string& name,
                          const modify_request& req) -> caf::result<volume_record> {
      mods->calls.emplace_back(name, req);
      auto it = recs->find(name);
      if (it == recs->end() || owner_of(it->second) != req.owner) {
        return missing(name);
      }
      if (mods->refuse) {
        return mods->refuse;
      }
      auto& rec = it->second;
      rec.capacity_bytes = std::max(rec.capacity_bytes, req.required_bytes);
      for (const auto& [key, value] : req.parameters) {
        rec.mutable_parameters[key] = value;
      }
      return rec;
    },
    // Stats and grow answer like the volume actor's check_volume_path: only at the
    // staging path; anywhere else (and for an unknown name) NOT_FOUND.
    [recs, missing](atom::stats, const std::string& name,
                    const std::string& path) -> caf::result<volume_stats> {
      auto it = recs->find(name);
      if (it == recs->end() || it->second.kind != record_kind::volume) {
        return missing(name);
      }
      if (path.empty() || path != it->second.staging_path) {
        return make_error(ec::not_found, "volume " + name + " is not staged or published at "
                                           + path);
      }
      volume_stats st;
      st.total_bytes = 1 << 20;
      return st;
    },
    [recs, missing](atom::grow, const std::string& name,
                    const std::string& path) -> caf::result<uint64_t> {
      auto it = recs->find(name);
      if (it == recs->end() || it->second.kind != record_kind::volume) {
        return missing(name);
      }
      if (path.empty() || path != it->second.staging_path) {
        return make_error(ec::not_found, "volume " + name + " is not staged or published at "
                                           + path);
      }
      return it->second.capacity_bytes;
    },
  };
}

class csi_server_fixture : public ::testing::Test {
protected:
  test::temp_dir dir;
  std::string path = dir.path + "/plugins/berth.csi.dev/csi.sock";
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<gateway> gw;
  std::shared_ptr<record_map> recs = std::make_shared<record_map>();
  std::shared_ptr<modify_log> mods = std::make_shared<modify_log>();
  registry_actor reg;
  std::unique_ptr<csi_server> srv;
  std::shared_ptr<grpc::Channel> channel;
  /// The volume actors the node service sends publishes straight to; null: none (all
  /// go to the registry stand-in).
  std::shared_ptr<volume_handles> handles;
  /// csi_config::advertise_since_1_10 (a test may clear it before SetUp).
  bool advertise_since_1_10 = true;
  /// The backend "block" (GetCapacity's; a test may set its own before SetUp).
  std::shared_ptr<backend> block = std::make_shared<capacity_backend>();
  /// The committed records ListVolumes reads; null: it asks the registry stand-in.
  std::shared_ptr<record_directory> directory;
  /// Where the server counts its RPCs.
  std::shared_ptr<telemetry> stats = std::make_shared<telemetry>(std::vector<std::string>{"block"});

  csi_config config() {
    csi_config c;
    c.stats = stats;
    c.endpoint = "unix://" + path;
    c.node_id = "node-1";
    c.version = "9.9.9";
    c.kubelet_dir = dir.path;
    c.backends["block"] = block;
    c.handles = handles;
    c.directory = directory;
    c.advertise_since_1_10 = advertise_since_1_10;
    return c;
  }

  void SetUp() override {
    cfg.add_message_types<caf::id_block::berth>();
    sys = std::make_unique<caf::actor_system>(cfg);
    gw = std::make_unique<gateway>(*sys);
    reg = caf::actor_cast<registry_actor>(sys->spawn(fake_csi_registry, recs, mods));
    srv = std::make_unique<csi_server>(*gw, reg, config());
    auto err = srv->start();
    ASSERT_FALSE(err) << describe(err);
    channel = grpc::CreateChannel("unix:" + path, grpc::InsecureChannelCredentials());
  }

  void TearDown() override {
    srv->stop();
    caf::anon_send_exit(reg, caf::exit_reason::user_shutdown);
  }

  static grpc::ClientContext* ctx(grpc::ClientContext& c) {
    c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return &c;
  }

  grpc::Status create_volume(const std::string& name, v1::CreateVolumeResponse* resp) {
    v1::CreateVolumeRequest req;
    req.set_name(name);
    auto* cap = req.add_volume_capabilities();
    cap->mutable_mount()->set_fs_type("xfs");
    cap->mutable_access_mode()->set_mode(v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    req.mutable_capacity_range()->set_required_bytes(1 << 20);
    grpc::ClientContext c;
    return v1::Controller::NewStub(channel)->CreateVolume(ctx(c), req, resp);
  }
};

} // namespace berth::test
