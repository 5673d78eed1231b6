// The bounds of core/limits.hpp against the real berthd: over a bound an RPC is
// refused with a message that names the input and the bound, and nothing changes
// on the host or in the state; at the bound it works.

#include <filesystem>

#include "tests/csi/csi_fixture.hpp"

namespace berth::csi_test {
namespace {

class LimitsTest : public csi_fixture {
protected:
  /// `st` has `code` and its message holds `words`.
  ::testing::AssertionResult refused(grpc::StatusCode code, const grpc::Status& st,
                                     std::initializer_list<std::string> words) {
    auto ok = code_is(code, st);
    if (!ok) {
      return ok;
    }
    for (const auto& w : words) {
      if (st.error_message().find(w) == std::string::npos) {
        return ::testing::AssertionFailure()
               << "message lacks \"" << w << "\": " << st.error_message();
      }
    }
    return ::testing::AssertionSuccess();
  }

  /// Names of the volumes ListVolumes returns.
  std::vector<std::string> volume_ids() {
    v1::ListVolumesResponse resp;
    EXPECT_RPC(OK, call(&Ctrl::ListVolumes, v1::ListVolumesRequest{}, resp));
    std::vector<std::string> ids;
    for (const auto& e : resp.entries()) {
      ids.push_back(e.volume().volume_id());
    }
    return ids;
  }

  /// Files where the block backend keeps images (BLOCK/volumes, BLOCK/snapshots), temp
  /// images included; BLOCK/owner, which berthd writes at start, is none.
  size_t images() {
    size_t n = 0;
    for (const char* dir : {"/block/volumes", "/block/snapshots"}) {
      std::error_code err;
      for (auto it = std::filesystem::recursive_directory_iterator(berthd().state_dir() + dir, err);
           !err && it != std::filesystem::recursive_directory_iterator(); it.increment(err)) {
        n += it->is_regular_file() ? 1 : 0;
      }
    }
    return n;
  }
};

TEST_F(LimitsTest, CreateVolumeOverAParameterBoundCreatesNothing) {
  v1::CreateVolumeResponse resp;
  auto many = create_request("p1", GiB);
  for (int i = 0; i < 65; ++i) {
    (*many.mutable_parameters())["k" + std::to_string(i)] = "v";
  }
  EXPECT_TRUE(refused(grpc::StatusCode::INVALID_ARGUMENT,
                      call(&Ctrl::CreateVolume, many, resp), {"parameters", "at most 64"}));
  auto long_value = create_request("p2", GiB, 0, {{"fsType", std::string(4097, 'x')}});
  EXPECT_TRUE(refused(grpc::StatusCode::INVALID_ARGUMENT,
                      call(&Ctrl::CreateVolume, long_value, resp), {"fsType", "at most 4096"}));
  auto long_key = create_request("p3", GiB, 0, {{std::string(129, 'k'), "v"}});
  EXPECT_TRUE(refused(grpc::StatusCode::INVALID_ARGUMENT,
                      call(&Ctrl::CreateVolume, long_key, resp), {"key", "at most 128"}));
  EXPECT_TRUE(volume_ids().empty());
  EXPECT_EQ(images(), 0u);
}

TEST_F(LimitsTest, VolumeNamesAreBoundedAt128Bytes) {
  v1::CreateVolumeResponse resp;
  auto over = create_request(std::string(129, 'n'), GiB);
  EXPECT_TRUE(refused(grpc::StatusCode::INVALID_ARGUMENT,
                      call(&Ctrl::CreateVolume, over, resp), {"name", "at most 128"}));
  EXPECT_TRUE(volume_ids().empty());
  v1::Volume vol;
  ASSERT_TRUE(create_volume(std::string(128, 'n'), &vol)) << "a name at the bound is fine";
  EXPECT_EQ(vol.volume_id(), std::string(128, 'n'));
}

TEST_F(LimitsTest, NodeStageOverTheMountFlagBoundsMountsNothing) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  auto cap = mount_cap();
  for (int i = 0; i < 33; ++i) {
    cap.mutable_mount()->add_mount_flags("noatime");
  }
  v1::NodeStageVolumeRequest req;
  req.set_volume_id(vol.volume_id());
  req.set_staging_target_path(staging);
  *req.mutable_volume_capability() = cap;
  v1::NodeStageVolumeResponse resp;
  EXPECT_TRUE(refused(grpc::StatusCode::INVALID_ARGUMENT,
                      call(&Node::NodeStageVolume, req, resp), {"mount_flags", "at most 32"}));
  auto long_flag = mount_cap();
  long_flag.mutable_mount()->add_mount_flags("context=" + std::string(300, 'x'));
  *req.mutable_volume_capability() = long_flag;
  EXPECT_TRUE(refused(grpc::StatusCode::INVALID_ARGUMENT,
                      call(&Node::NodeStageVolume, req, resp), {"mount flag", "at most 256"}));
  EXPECT_FALSE(mount_at(staging).has_value()) << "a refused stage mounted " << staging;
  EXPECT_TRUE(loops_under(berthd().root()).empty()) << "a refused stage attached a loop device";

  // At the bound: 32 flags stage.
  cap.mutable_mount()->mutable_mount_flags()->RemoveLast();
  ASSERT_TRUE(stage(vol.volume_id(), staging, cap));
  EXPECT_TRUE(mount_at(staging).has_value());
}

TEST_F(LimitsTest, NodePublishBeyondTheTargetBoundIsResourceExhausted) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("v", &vol));
  auto staging = staging_path(vol.volume_id());
  ASSERT_TRUE(stage(vol.volume_id(), staging));
  for (int i = 0; i < 256; ++i) {
    ASSERT_TRUE(publish(vol.volume_id(), staging, target_path(vol.volume_id(), "t" + std::to_string(i))))
      << "target " << i << " of 256";
  }
  auto over = target_path(vol.volume_id(), "t256");
  v1::NodePublishVolumeRequest req;
  req.set_volume_id(vol.volume_id());
  req.set_staging_target_path(staging);
  req.set_target_path(over);
  *req.mutable_volume_capability() = mount_cap();
  v1::NodePublishVolumeResponse resp;
  EXPECT_TRUE(refused(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      call(&Node::NodePublishVolume, req, resp), {"256"}));
  EXPECT_FALSE(mount_at(over).has_value()) << "a refused publish mounted " << over;
  EXPECT_FALSE(std::filesystem::exists(over)) << "a refused publish created " << over;
  // A target already published is still idempotent at the bound; one freed makes room.
  EXPECT_TRUE(publish(vol.volume_id(), staging, target_path(vol.volume_id(), "t0")));
  ASSERT_TRUE(unpublish(vol.volume_id(), target_path(vol.volume_id(), "t0")));
  EXPECT_TRUE(publish(vol.volume_id(), staging, over));
  // The bound survives a restart: the record still holds 256 targets.
  ASSERT_TRUE(restart(false));
  req.set_target_path(target_path(vol.volume_id(), "t0"));
  EXPECT_RPC(RESOURCE_EXHAUSTED, call(&Node::NodePublishVolume, req, resp));
}

} // namespace
} // namespace berth::csi_test
