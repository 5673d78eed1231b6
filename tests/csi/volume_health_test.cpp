// The CSI view of volume health against the real berthd: a condition made for real on the
// host (a staging mount gone behind berthd's back, xfs shut down under a published volume)
// shows in ControllerGetVolume, ListVolumes and NodeGetVolumeStats, naming what was seen,
// and clears when its cause is gone. The same table through Docker, berthctl and the
// metric: tests/e2e/volume_health_e2e.sh.

#include <chrono>

#include <sys/mount.h>

#include "tests/csi/node_fixture.hpp"

namespace berth::csi_test {
namespace {

class VolumeHealthTest : public NodeTest {
protected:
  /// berthd again, looking at every volume every 100 ms.
  ::testing::AssertionResult look_often() {
    berthd().extra_args = {"--health-interval-ms", "100"};
    return restart(false);
  }

  v1::VolumeCondition controller_condition(const std::string& id) {
    v1::ControllerGetVolumeRequest req;
    req.set_volume_id(id);
    v1::ControllerGetVolumeResponse resp;
    auto st = call(&Ctrl::ControllerGetVolume, req, resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp.status().volume_condition();
  }

  /// Waits (20 s) for berthd's log to say that `reason` began for volume `id`. The line is
  /// written under the health table's lock, while the table takes in what it says: a call
  /// answered after the line can be read sees the table with it.
  ::testing::AssertionResult began(const std::string& id, const std::string& reason) {
    auto line = "volume " + id + " is abnormal (" + reason + ")";
    return berthd().wait_for_log(line, std::chrono::seconds(20))
      ? ::testing::AssertionSuccess()
      : ::testing::AssertionFailure() << "no \"" << line << "\" within 20 s";
  }

  /// The same for the line that says `reason` ended.
  ::testing::AssertionResult ended(const std::string& id, const std::string& reason) {
    auto line = "volume " + id + ": " + reason + " has ended";
    return berthd().wait_for_log(line, std::chrono::seconds(20))
      ? ::testing::AssertionSuccess()
      : ::testing::AssertionFailure() << "no \"" << line << "\" within 20 s";
  }

  v1::VolumeCondition listed_condition(const std::string& id) {
    v1::ListVolumesResponse resp;
    auto st = call(&Ctrl::ListVolumes, v1::ListVolumesRequest{}, resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    for (const auto& e : resp.entries()) {
      if (e.volume().volume_id() == id) {
        return e.status().volume_condition();
      }
    }
    ADD_FAILURE() << id << " not listed: " << resp.ShortDebugString();
    return {};
  }

  v1::VolumeCondition node_condition(const std::string& id, const std::string& path) {
    v1::NodeGetVolumeStatsRequest req;
    req.set_volume_id(id);
    req.set_volume_path(path);
    v1::NodeGetVolumeStatsResponse resp;
    auto st = call(&Node::NodeGetVolumeStats, req, resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp.volume_condition();
  }
};

TEST_F(VolumeHealthTest, AStagingMountGoneBehindBerthdIsAbnormalUntilUnstaged) {
  ASSERT_TRUE(look_often());
  v1::Volume vol;
  ASSERT_TRUE(create_volume("gone", &vol));
  const auto& id = vol.volume_id();
  auto staging = staging_path(id);
  ASSERT_TRUE(stage(id, staging));
  EXPECT_FALSE(controller_condition(id).abnormal());
  EXPECT_FALSE(listed_condition(id).abnormal());

  ASSERT_EQ(::umount2(staging.c_str(), MNT_DETACH), 0) << std::strerror(errno);
  ASSERT_TRUE(began(id, "mount_gone"));
  auto c = controller_condition(id);
  ASSERT_TRUE(c.abnormal()) << "ControllerGetVolume: " << c.ShortDebugString();
  EXPECT_NE(c.message().find(staging + " is not mounted any more"), std::string::npos)
    << c.message();
  EXPECT_TRUE(listed_condition(id).abnormal());
  EXPECT_TRUE(node_condition(id, staging).abnormal());

  ASSERT_TRUE(unstage(id, staging)) << "unstage of a vanished mount is OK";
  ASSERT_TRUE(ended(id, "mount_gone"));
  EXPECT_FALSE(controller_condition(id).abnormal()) << "no staging path: nothing is gone";
  EXPECT_FALSE(listed_condition(id).abnormal());
}

TEST_F(VolumeHealthTest, XfsShutDownUnderAPublishedVolumeIsAbnormalUntilUnstaged) {
  ASSERT_TRUE(look_often());
  v1::Volume vol;
  ASSERT_TRUE(create_volume("shut", &vol));
  const auto& id = vol.volume_id();
  auto staging = staging_path(id);
  auto target = target_path(id);
  ASSERT_TRUE(stage(id, staging));
  ASSERT_TRUE(publish(id, staging, target));
  ASSERT_EQ(write_file_sync(target + "/data", "x"), 0);
  ASSERT_EQ(std::system(("xfs_io -x -c shutdown " + staging).c_str()), 0);

  ASSERT_TRUE(began(id, "filesystem_shut_down"));
  auto c = controller_condition(id);
  ASSERT_TRUE(c.abnormal()) << c.ShortDebugString();
  EXPECT_NE(c.message().find("has shut down"), std::string::npos) << c.message();
  auto node = node_condition(id, target);
  EXPECT_TRUE(node.abnormal()) << "statvfs works; the sampler saw the shutdown";
  EXPECT_NE(node.message().find("has shut down"), std::string::npos) << node.message();

  ASSERT_TRUE(unpublish(id, target));
  ASSERT_TRUE(unstage(id, staging));
  ASSERT_TRUE(ended(id, "filesystem_shut_down"));
  EXPECT_FALSE(controller_condition(id).abnormal());
}

} // namespace
} // namespace berth::csi_test
