// The CSI services around the registry (docs/design.md, "Three hops"): NodePublishVolume and
// NodeUnpublishVolume go straight to the actor the handles name, and a volume actor that
// quit, or a name the handles do not hold, still reaches the registry (here its stand-in,
// which knows nothing of the volumes in the handles). ListVolumes reads the record
// directory.

#include <atomic>
#include <memory>
#include <string>

#include <caf/all.hpp>
#include <gtest/gtest.h>

#include "tests/protocols/csi_server_fixture.hpp"

using namespace berth;
namespace v1 = ::csi::v1;
using grpc::StatusCode;

namespace {

/// What a volume that answers only direct requests got.
struct seen_by_volume {
  std::atomic<int> asked{0};
  std::string target; ///< the path of the last request, written before `asked` moves

  void got(const std::string& path) {
    target = path;
    ++asked;
  }
};

/// A volume that answers only the node calls sent straight to it, each with its own
/// answer, and keeps what it got.
caf::behavior direct_volume(caf::event_based_actor*, const std::shared_ptr<seen_by_volume>& seen) {
  return {
    [seen](atom::publish, publish_request& req, direct_reply<atom::ok>& reply) {
      seen->got(req.target);
      reply.deliver(atom::ok_v);
    },
    [seen](atom::unpublish, std::string& target, direct_reply<atom::ok>& reply) {
      seen->got(target);
      reply.deliver(make_error(ec::failed_precondition, "refused by the volume itself"));
    },
    [seen](atom::stage, stage_request& req, direct_reply<atom::ok>& reply) {
      seen->got(req.staging_path);
      reply.deliver(atom::ok_v);
    },
    [seen](atom::unstage, std::string& path, direct_reply<atom::ok>& reply) {
      seen->got(path);
      reply.deliver(atom::ok_v);
    },
    [seen](atom::stats, std::string& path, direct_reply<volume_stats>& reply) {
      seen->got(path);
      volume_stats st;
      st.total_bytes = 7 << 20;
      reply.deliver(st);
    },
    [seen](atom::grow, std::string& path, direct_reply<uint64_t>& reply) {
      seen->got(path);
      reply.deliver(uint64_t{9} << 20);
    },
  };
}

class csi_routes_test : public test::csi_server_fixture {
protected:
  std::shared_ptr<seen_by_volume> seen = std::make_shared<seen_by_volume>();

  csi_routes_test() { handles = std::make_shared<volume_handles>(); }

  volume_actor spawn_direct_volume() {
    return caf::actor_cast<volume_actor>(sys->spawn(direct_volume, seen));
  }

  v1::NodePublishVolumeRequest publish_of(const std::string& id) const {
    v1::NodePublishVolumeRequest pub;
    pub.set_volume_id(id);
    pub.set_target_path(dir.path + "/target");
    pub.set_staging_target_path(dir.path + "/staging");
    pub.mutable_volume_capability()->mutable_mount();
    pub.mutable_volume_capability()->mutable_access_mode()->set_mode(
      v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    return pub;
  }

  grpc::Status publish(const std::string& id) {
    v1::NodePublishVolumeResponse ignored;
    grpc::ClientContext c;
    return v1::Node::NewStub(channel)->NodePublishVolume(ctx(c), publish_of(id), &ignored);
  }

  grpc::Status unpublish(const std::string& id) {
    v1::NodeUnpublishVolumeRequest req;
    req.set_volume_id(id);
    req.set_target_path(dir.path + "/target");
    v1::NodeUnpublishVolumeResponse ignored;
    grpc::ClientContext c;
    return v1::Node::NewStub(channel)->NodeUnpublishVolume(ctx(c), req, &ignored);
  }
};

} // namespace

TEST_F(csi_routes_test, a_publish_and_an_unpublish_go_straight_to_the_volume) {
  auto vol = spawn_direct_volume();
  handles->put("pvc-1", vol);
  auto st = publish("pvc-1");
  EXPECT_TRUE(st.ok()) << st.error_message() << " (the registry stand-in knows no pvc-1)";
  EXPECT_EQ(seen->target, dir.path + "/target") << "the request's canonical target";
  st = unpublish("pvc-1");
  EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION) << st.error_message();
  EXPECT_EQ(st.error_message(), "refused by the volume itself") << "the volume's own error";
  EXPECT_EQ(seen->asked.load(), 2);
  caf::anon_send_exit(vol, caf::exit_reason::user_shutdown);
}

TEST_F(csi_routes_test, stage_unstage_stats_and_expand_go_straight_to_the_volume) {
  auto vol = spawn_direct_volume();
  handles->put("pvc-1", vol);
  auto node = v1::Node::NewStub(channel);
  const auto staging = dir.path + "/staging";
  v1::NodeStageVolumeRequest stage;
  stage.set_volume_id("pvc-1");
  stage.set_staging_target_path(staging);
  stage.mutable_volume_capability()->mutable_mount();
  stage.mutable_volume_capability()->mutable_access_mode()->set_mode(
    v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  v1::NodeStageVolumeResponse staged;
  grpc::ClientContext c1;
  auto st = node->NodeStageVolume(ctx(c1), stage, &staged);
  EXPECT_TRUE(st.ok()) << st.error_message() << " (the registry stand-in knows no pvc-1)";
  EXPECT_EQ(seen->target, staging);

  v1::NodeGetVolumeStatsRequest stats;
  stats.set_volume_id("pvc-1");
  stats.set_volume_path(staging);
  v1::NodeGetVolumeStatsResponse got;
  grpc::ClientContext c2;
  st = node->NodeGetVolumeStats(ctx(c2), stats, &got);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_GT(got.usage_size(), 0);
  EXPECT_EQ(got.usage(0).total(), 7 << 20) << "the volume's own figures";

  v1::NodeExpandVolumeRequest expand;
  expand.set_volume_id("pvc-1");
  expand.set_volume_path(staging);
  v1::NodeExpandVolumeResponse grown;
  grpc::ClientContext c3;
  st = node->NodeExpandVolume(ctx(c3), expand, &grown);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(grown.capacity_bytes(), int64_t{9} << 20);

  v1::NodeUnstageVolumeRequest unstage;
  unstage.set_volume_id("pvc-1");
  unstage.set_staging_target_path(staging);
  v1::NodeUnstageVolumeResponse unstaged;
  grpc::ClientContext c4;
  st = node->NodeUnstageVolume(ctx(c4), unstage, &unstaged);
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(seen->asked.load(), 4);
  caf::anon_send_exit(vol, caf::exit_reason::user_shutdown);
}

TEST_F(csi_routes_test, a_publish_whose_volume_quit_asks_the_registry_instead) {
  v1::CreateVolumeResponse created;
  ASSERT_TRUE(create_volume("pvc-1", &created).ok());
  auto vol = spawn_direct_volume();
  handles->put("pvc-1", vol);
  {
    caf::scoped_actor self{*sys};
    self->send_exit(vol, caf::exit_reason::user_shutdown);
    self->wait_for(vol);
  }
  auto st = publish("pvc-1");
  EXPECT_EQ(st.error_code(), StatusCode::FAILED_PRECONDITION)
    << "the registry stand-in's answer: pvc-1 is not staged; " << st.error_message();
  EXPECT_NE(st.error_message().find("is not staged at"), std::string::npos) << st.error_message();
  EXPECT_EQ(seen->asked.load(), 0);
}

TEST_F(csi_routes_test, a_name_the_handles_do_not_hold_is_the_registrys_to_answer) {
  EXPECT_EQ(publish("nope").error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(seen->asked.load(), 0);
}

namespace {

class csi_list_routes_test : public test::csi_server_fixture {
protected:
  csi_list_routes_test() { directory = std::make_shared<record_directory>(); }

  void put_csi(const std::string& name, record_kind kind = record_kind::volume) {
    volume_spec spec;
    spec.kind = kind;
    auto rec = make_csi_record(name, spec, 1 << 20);
    directory->put(std::make_shared<const volume_record>(std::move(rec)));
  }

  v1::ListVolumesResponse list(int32_t max_entries = 0, const std::string& token = {}) {
    v1::ListVolumesRequest req;
    req.set_max_entries(max_entries);
    req.set_starting_token(token);
    v1::ListVolumesResponse resp;
    grpc::ClientContext c;
    auto st = v1::Controller::NewStub(channel)->ListVolumes(ctx(c), req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp;
  }
};

std::vector<std::string> ids_of(const v1::ListVolumesResponse& resp) {
  std::vector<std::string> ids;
  for (const auto& entry : resp.entries()) {
    ids.push_back(entry.volume().volume_id());
  }
  return ids;
}

} // namespace

TEST_F(csi_list_routes_test, list_volumes_reads_csis_volumes_from_the_record_directory) {
  put_csi("pvc-b");
  put_csi("pvc-a");
  put_csi("snap-1", record_kind::snapshot);
  volume_record web;
  web.name = "web";
  web.owner = record_owner::docker;
  directory->put(std::make_shared<const volume_record>(web));
  auto all = list();
  EXPECT_EQ(ids_of(all), (std::vector<std::string>{"pvc-a", "pvc-b"}))
    << "CSI's volumes, sorted, and not the registry stand-in's (it holds none)";
  EXPECT_EQ(all.next_token(), "");
  ASSERT_EQ(all.entries_size(), 2);
  EXPECT_FALSE(all.entries(0).status().volume_condition().abnormal());
  EXPECT_EQ(all.entries(0).volume().capacity_bytes(), 1 << 20);

  auto first = list(1);
  EXPECT_EQ(ids_of(first), std::vector<std::string>{"pvc-a"});
  EXPECT_EQ(first.next_token(), "pvc-b");
  auto second = list(1, first.next_token());
  EXPECT_EQ(ids_of(second), std::vector<std::string>{"pvc-b"});
  EXPECT_EQ(second.next_token(), "");

  v1::ListVolumesRequest req;
  req.set_starting_token("pvc-gone");
  v1::ListVolumesResponse resp;
  grpc::ClientContext c;
  auto st = v1::Controller::NewStub(channel)->ListVolumes(ctx(c), req, &resp);
  EXPECT_EQ(st.error_code(), StatusCode::ABORTED) << st.error_message();
}

TEST_F(csi_list_routes_test, get_snapshot_reads_csis_snapshot_from_the_record_directory) {
  put_csi("pvc-a");
  put_csi("snap-1", record_kind::snapshot);
  volume_record web;
  web.name = "web-snap";
  web.owner = record_owner::docker;
  web.kind = record_kind::snapshot;
  directory->put(std::make_shared<const volume_record>(web));
  auto get = [this](const std::string& id, v1::GetSnapshotResponse* resp) {
    v1::GetSnapshotRequest req;
    req.set_snapshot_id(id);
    grpc::ClientContext c;
    return v1::Controller::NewStub(channel)->GetSnapshot(ctx(c), req, resp);
  };
  v1::GetSnapshotResponse got;
  auto st = get("snap-1", &got);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(got.snapshot().snapshot_id(), "snap-1");
  EXPECT_TRUE(got.snapshot().ready_to_use());
  for (const char* id : {"pvc-a", "web-snap", "snap-gone"}) {
    v1::GetSnapshotResponse none;
    st = get(id, &none);
    EXPECT_EQ(st.error_code(), StatusCode::NOT_FOUND) << id << ": a volume, Docker's, or none";
    EXPECT_NE(st.error_message().find(id), std::string::npos) << st.error_message();
  }
}
