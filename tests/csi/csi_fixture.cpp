#include "tests/csi/csi_fixture.hpp"

#include <cstdio>
#include <filesystem>
#include <thread>

namespace berth::csi_test {

namespace {

void banner(const std::string& why) {
  std::fprintf(stderr,
               "\n############################################################################\n"
               "## SKIPPED: csi_conformance_test: %s\n"
               "## The CSI conformance suite did NOT run; nothing it covers was verified.\n"
               "############################################################################\n\n",
               why.c_str());
}

} // namespace

std::string code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "code " + std::to_string(static_cast<int>(code));
  }
}

v1::VolumeCapability mount_cap(const std::string& fs_type, Mode::Mode mode) {
  v1::VolumeCapability cap;
  cap.mutable_mount()->set_fs_type(fs_type);
  cap.mutable_access_mode()->set_mode(mode);
  return cap;
}

v1::VolumeCapability block_cap(Mode::Mode mode) {
  v1::VolumeCapability cap;
  cap.mutable_block();
  cap.mutable_access_mode()->set_mode(mode);
  return cap;
}

v1::CreateVolumeRequest create_request(const std::string& name, uint64_t required,
                                       uint64_t limit,
                                       const std::map<std::string, std::string>& params,
                                       const v1::VolumeCapability& cap) {
  v1::CreateVolumeRequest req;
  req.set_name(name);
  if (required > 0 || limit > 0) {
    req.mutable_capacity_range()->set_required_bytes(static_cast<int64_t>(required));
    req.mutable_capacity_range()->set_limit_bytes(static_cast<int64_t>(limit));
  }
  *req.add_volume_capabilities() = cap;
  for (auto& [k, v] : params) {
    (*req.mutable_parameters())[k] = v;
  }
  return req;
}

// -- daemon -------------------------------------------------------------------

void csi_fixture::SetUp() {
  berthd_process::clean_stale_runs();
  if (auto why = berthd_process::missing_prerequisite(); !why.empty()) {
    banner(why);
    GTEST_SKIP() << why;
  }
  berthd_ = std::make_unique<berthd_process>();
  ASSERT_FALSE(berthd_->root().empty()) << "mkdtemp under /tmp failed";
  auto err = berthd_->start();
  ASSERT_EQ(err, "") << "berthd " << berthd_process::binary() << " did not start";
  ASSERT_TRUE(connect());
}

void csi_fixture::TearDown() {
  if (!berthd_) {
    return;
  }
  ident_.reset();
  ctrl_.reset();
  node_.reset();
  channel_.reset();
  if (berthd_->running()) {
    int rc = berthd_->stop();
    EXPECT_EQ(rc, 0) << "berthd should exit 0 on SIGTERM (-1: did not stop within 30 s)";
  }
  if (HasFailure()) {
    std::fprintf(stderr, "---- berthd's log (%s), last lines ----\n%s----\n",
                 berthd_->log_path().c_str(), berthd_->log_tail(60).c_str());
  }
  auto root = berthd_->root();
  berthd_.reset(); // cleans mounts and loop devices, removes the temp dir
  EXPECT_TRUE(mounts_under(root).empty()) << "clean-up left mounts under " << root;
  EXPECT_TRUE(loops_under(root).empty()) << "clean-up left loop devices under " << root;
}

::testing::AssertionResult csi_fixture::connect() {
  grpc::ChannelArguments args;
  // A private connection per channel, and a quick reconnect after a restart.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 200);
  channel_ = grpc::CreateCustomChannel(berthd_->endpoint(), grpc::InsecureChannelCredentials(),
                                       args);
  ident_ = v1::Identity::NewStub(channel_);
  ctrl_ = v1::Controller::NewStub(channel_);
  node_ = v1::Node::NewStub(channel_);
  auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(30);
  if (!channel_->WaitForConnected(deadline)) {
    return ::testing::AssertionFailure()
           << "no gRPC connection to " << berthd_->endpoint() << " within 30 s";
  }
  grpc::Status st;
  v1::ProbeResponse probe;
  while (std::chrono::system_clock::now() < deadline) {
    st = call(&Ident::Probe, v1::ProbeRequest{}, probe);
    if (st.ok() && (!probe.has_ready() || probe.ready().value())) {
      return ::testing::AssertionSuccess();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ::testing::AssertionFailure() << "Probe did not answer ready within 30 s: "
                                       << code_name(st.error_code()) << " "
                                       << st.error_message();
}

::testing::AssertionResult csi_fixture::restart(bool crash) {
  ident_.reset();
  ctrl_.reset();
  node_.reset();
  channel_.reset();
  if (crash) {
    berthd_->kill9();
  } else {
    int rc = berthd_->stop();
    if (rc != 0) {
      return ::testing::AssertionFailure()
             << "berthd exited with " << rc << " on SIGTERM (-1: not within 30 s)";
    }
  }
  auto err = berthd_->start();
  if (!err.empty()) {
    return ::testing::AssertionFailure() << "restart failed: " << err;
  }
  return connect();
}

// -- assertions -----------------------------------------------------------------

::testing::AssertionResult csi_fixture::code_is(grpc::StatusCode want,
                                                const grpc::Status& got) const {
  if (got.error_code() == want) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "\n  call:     " << last_call_ << "\n  expected: " << code_name(want)
         << "\n  got:      " << code_name(got.error_code()) << " \"" << got.error_message()
         << "\"";
}

// -- steps ------------------------------------------------------------------------

::testing::AssertionResult csi_fixture::create_volume(const v1::CreateVolumeRequest& req,
                                                      v1::Volume* out) {
  v1::CreateVolumeResponse resp;
  auto ok = code_is(grpc::StatusCode::OK, call(&Ctrl::CreateVolume, req, resp));
  if (!ok) {
    return ok;
  }
  if (resp.volume().volume_id().empty()) {
    return ::testing::AssertionFailure() << "CreateVolume returned no volume_id: "
                                         << resp.ShortDebugString();
  }
  if (out != nullptr) {
    *out = resp.volume();
  }
  return ok;
}

::testing::AssertionResult
csi_fixture::create_volume(const std::string& name, v1::Volume* out,
                           const std::map<std::string, std::string>& params, uint64_t bytes) {
  return create_volume(create_request(name, bytes, 0, params), out);
}

::testing::AssertionResult csi_fixture::delete_volume(const std::string& id) {
  v1::DeleteVolumeRequest req;
  req.set_volume_id(id);
  v1::DeleteVolumeResponse resp;
  return code_is(grpc::StatusCode::OK, call(&Ctrl::DeleteVolume, req, resp));
}

::testing::AssertionResult csi_fixture::create_snapshot(const std::string& name,
                                                        const std::string& source,
                                                        v1::Snapshot* out) {
  v1::CreateSnapshotRequest req;
  req.set_name(name);
  req.set_source_volume_id(source);
  v1::CreateSnapshotResponse resp;
  auto ok = code_is(grpc::StatusCode::OK, call(&Ctrl::CreateSnapshot, req, resp));
  if (ok && resp.snapshot().snapshot_id().empty()) {
    return ::testing::AssertionFailure() << "CreateSnapshot returned no snapshot_id: "
                                         << resp.ShortDebugString();
  }
  if (ok && out != nullptr) {
    *out = resp.snapshot();
  }
  return ok;
}

std::string csi_fixture::staging_path(const std::string& id) {
  auto path = berthd_->kubelet_dir() + "/staging/" + id;
  std::filesystem::create_directories(path);
  return path;
}

std::string csi_fixture::target_path(const std::string& id, const std::string& tag) {
  auto dir = berthd_->kubelet_dir() + "/pods/" + tag;
  std::filesystem::create_directories(dir);
  return dir + "/" + id;
}

::testing::AssertionResult csi_fixture::stage(const std::string& id, const std::string& staging,
                                              const v1::VolumeCapability& cap) {
  return code_is(grpc::StatusCode::OK, stage_status(id, staging, cap));
}

::testing::AssertionResult csi_fixture::unstage(const std::string& id,
                                                const std::string& staging) {
  return code_is(grpc::StatusCode::OK, unstage_status(id, staging));
}

::testing::AssertionResult csi_fixture::publish(const std::string& id, const std::string& staging,
                                                const std::string& target,
                                                const v1::VolumeCapability& cap, bool readonly) {
  return code_is(grpc::StatusCode::OK, publish_status(id, staging, target, cap, readonly));
}

::testing::AssertionResult csi_fixture::unpublish(const std::string& id,
                                                  const std::string& target) {
  return code_is(grpc::StatusCode::OK, unpublish_status(id, target));
}

grpc::Status csi_fixture::stage_status(const std::string& id, const std::string& staging,
                                       const v1::VolumeCapability& cap) {
  v1::NodeStageVolumeRequest req;
  req.set_volume_id(id);
  req.set_staging_target_path(staging);
  *req.mutable_volume_capability() = cap;
  v1::NodeStageVolumeResponse resp;
  return call(&Node::NodeStageVolume, req, resp);
}

grpc::Status csi_fixture::unstage_status(const std::string& id, const std::string& staging) {
  v1::NodeUnstageVolumeRequest req;
  req.set_volume_id(id);
  req.set_staging_target_path(staging);
  v1::NodeUnstageVolumeResponse resp;
  return call(&Node::NodeUnstageVolume, req, resp);
}

grpc::Status csi_fixture::publish_status(const std::string& id, const std::string& staging,
                                         const std::string& target,
                                         const v1::VolumeCapability& cap, bool readonly) {
  v1::NodePublishVolumeRequest req;
  req.set_volume_id(id);
  req.set_staging_target_path(staging);
  req.set_target_path(target);
  *req.mutable_volume_capability() = cap;
  req.set_readonly(readonly);
  v1::NodePublishVolumeResponse resp;
  return call(&Node::NodePublishVolume, req, resp);
}

grpc::Status csi_fixture::unpublish_status(const std::string& id, const std::string& target) {
  v1::NodeUnpublishVolumeRequest req;
  req.set_volume_id(id);
  req.set_target_path(target);
  v1::NodeUnpublishVolumeResponse resp;
  return call(&Node::NodeUnpublishVolume, req, resp);
}

::testing::AssertionResult csi_fixture::controller_expand(const std::string& id, uint64_t bytes,
                                                          v1::ControllerExpandVolumeResponse* out) {
  v1::ControllerExpandVolumeRequest req;
  req.set_volume_id(id);
  req.mutable_capacity_range()->set_required_bytes(static_cast<int64_t>(bytes));
  *req.mutable_volume_capability() = mount_cap();
  v1::ControllerExpandVolumeResponse resp;
  auto ok = code_is(grpc::StatusCode::OK, call(&Ctrl::ControllerExpandVolume, req, resp));
  if (ok && out != nullptr) {
    *out = resp;
  }
  return ok;
}

::testing::AssertionResult csi_fixture::node_expand(const std::string& id,
                                                    const std::string& volume_path,
                                                    const std::string& staging,
                                                    v1::NodeExpandVolumeResponse* out) {
  v1::NodeExpandVolumeRequest req;
  req.set_volume_id(id);
  req.set_volume_path(volume_path);
  req.set_staging_target_path(staging);
  *req.mutable_volume_capability() = mount_cap();
  v1::NodeExpandVolumeResponse resp;
  auto ok = code_is(grpc::StatusCode::OK, call(&Node::NodeExpandVolume, req, resp));
  if (ok && out != nullptr) {
    *out = resp;
  }
  return ok;
}

} // namespace berth::csi_test
