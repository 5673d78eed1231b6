// Seed 4 end to end: expand and modify coalesce into one call (docs/design.md). A PVC's
// size and its VolumeAttributesClass change at once, so external-resizer's
// ControllerExpandVolume and the modifier's ControllerModifyVolume reach berthd within
// milliseconds, on a backend that allows one modification per cooldown. Through gRPC
// on the real berthd, with a real loop device: the result is read back from berthctl,
// statvfs and sysfs.

#include <future>

#include <grpcpp/create_channel.h>
#include <rapidjson/document.h>

#include "tests/csi/csi_fixture.hpp"
#include "tests/csi/host_probe.hpp"

namespace berth::csi_test {
namespace {

constexpr const char* cooldown_ms = "3600000"; // one hour: a second modification is refused

class ModifyTest : public csi_fixture {
protected:
  /// Restarts berthd with this coalescing window and the cooldown.
  ::testing::AssertionResult with_window(const std::string& window_ms) {
    berthd().extra_args = {"--coalesce-window-ms", window_ms, "--modify-cooldown-ms", cooldown_ms};
    return restart(false);
  }

  /// A published 1 GiB ext4 volume; returns its target path.
  std::string published_volume(const std::string& name) {
    v1::Volume vol;
    EXPECT_TRUE(create_volume(name, &vol, {{"fsType", "ext4"}}));
    staging_ = staging_path(name);
    auto target = target_path(name);
    EXPECT_TRUE(stage(name, staging_));
    EXPECT_TRUE(publish(name, staging_, target));
    return target;
  }

  /// Sends an expand and a modify at the same moment, each on its own stub, as
  /// the resizer and the modifier do.
  std::pair<grpc::Status, grpc::Status> expand_and_modify_together(const std::string& id,
                                                                   uint64_t bytes,
                                                                   const std::string& read_ahead) {
    auto channel = grpc::CreateChannel(berthd().endpoint(), grpc::InsecureChannelCredentials());
    std::promise<void> go;
    auto start = go.get_future().share();
    auto expand = std::async(std::launch::async, [&, start] {
      auto stub = v1::Controller::NewStub(channel);
      v1::ControllerExpandVolumeRequest req;
      req.set_volume_id(id);
      req.mutable_capacity_range()->set_required_bytes(static_cast<int64_t>(bytes));
      *req.mutable_volume_capability() = mount_cap();
      v1::ControllerExpandVolumeResponse resp;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
      start.wait();
      return stub->ControllerExpandVolume(&ctx, req, &resp);
    });
    auto modify = std::async(std::launch::async, [&, start] {
      auto stub = v1::Controller::NewStub(channel);
      v1::ControllerModifyVolumeRequest req;
      req.set_volume_id(id);
      (*req.mutable_mutable_parameters())["readAheadKB"] = read_ahead;
      v1::ControllerModifyVolumeResponse resp;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
      start.wait();
      return stub->ControllerModifyVolume(&ctx, req, &resp);
    });
    go.set_value();
    return {expand.get(), modify.get()};
  }

  /// Runs berthctl against this berthd: its exit status and what it printed.
  std::pair<int, std::string> berthctl(const std::string& args) {
    return berthd().berthctl(args);
  }

  /// `berthctl inspect NAME --json`, parsed.
  ::testing::AssertionResult inspect(const std::string& name, rapidjson::Document& out) {
    auto [status, text] = berthctl("inspect " + name + " --json");
    out.Parse(text.c_str());
    if (status != 0 || out.HasParseError() || !out.IsObject()) {
      return ::testing::AssertionFailure() << "berthctl inspect " << name << " exited " << status
                                           << " and printed: " << text;
    }
    return ::testing::AssertionSuccess();
  }

  static uint64_t modifications(const rapidjson::Document& doc) {
    return doc.HasMember("modifications") && doc["modifications"].IsUint64()
             ? doc["modifications"].GetUint64()
             : 9999;
  }

  /// /sys/block/loopN/queue/read_ahead_kb of the volume's loop device.
  static std::string read_ahead_of(const rapidjson::Document& doc) {
    if (!doc.HasMember("device") || !doc["device"].IsString()) {
      return "<no device in the record>";
    }
    std::string dev = doc["device"].GetString();
    auto name = dev.substr(dev.rfind('/') + 1);
    auto text = read_file("/sys/block/" + name + "/queue/read_ahead_kb");
    if (!text) {
      return "<unreadable>";
    }
    return text->substr(0, text->find('\n'));
  }

  std::string staging_;
};

TEST_F(ModifyTest, WithTheWindowOffAnExpandAndAModifyTogetherGetOneSuccessAndOneResourceExhausted) {
  ASSERT_TRUE(with_window("0"));
  published_volume("seed4-off");
  auto [expand, modify] = expand_and_modify_together("seed4-off", 2 * GiB, "256");
  auto ok = int{expand.ok()} + int{modify.ok()};
  EXPECT_EQ(ok, 1) << "expand: " << expand.error_code() << " " << expand.error_message()
                   << "; modify: " << modify.error_code() << " " << modify.error_message();
  const auto& refused = expand.ok() ? modify : expand;
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_NE(refused.error_message().find("may be modified again"), std::string::npos)
    << refused.error_message();
  rapidjson::Document doc;
  ASSERT_TRUE(inspect("seed4-off", doc));
  EXPECT_EQ(modifications(doc), 1u);
}

TEST_F(ModifyTest, WithTheWindowOnBothSucceedInOneBackendModificationThatSurvivesACrash) {
  ASSERT_TRUE(with_window("1000"));
  auto target = published_volume("seed4-on");
  auto before = statvfs_of(target);
  ASSERT_TRUE(before);
  auto [expand, modify] = expand_and_modify_together("seed4-on", 2 * GiB, "256");
  ASSERT_TRUE(expand.ok()) << expand.error_code() << " " << expand.error_message();
  ASSERT_TRUE(modify.ok()) << modify.error_code() << " " << modify.error_message();

  rapidjson::Document doc;
  ASSERT_TRUE(inspect("seed4-on", doc));
  EXPECT_EQ(modifications(doc), 1u) << "both requests in one backend modification";
  EXPECT_EQ(doc["capacity_bytes"].GetUint64(), 2 * GiB);
  ASSERT_TRUE(doc["mutable_parameters"].IsObject());
  EXPECT_STREQ(doc["mutable_parameters"]["readAheadKB"].GetString(), "256");
  EXPECT_EQ(read_ahead_of(doc), "256") << "the loop device got the parameter";
  auto after = statvfs_of(target);
  ASSERT_TRUE(after);
  // The filesystem grew with the image (ext4 keeps some blocks for itself).
  EXPECT_GT(after->total_bytes, before->total_bytes + GiB / 2)
    << before->total_bytes << " -> " << after->total_bytes;

  // A new change within the cooldown is refused, retryably, and changes nothing.
  auto [late_expand, late_modify] = expand_and_modify_together("seed4-on", 3 * GiB, "512");
  EXPECT_EQ(late_expand.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
    << late_expand.error_message();
  EXPECT_EQ(late_modify.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
    << late_modify.error_message();
  rapidjson::Document unchanged;
  ASSERT_TRUE(inspect("seed4-on", unchanged));
  EXPECT_EQ(modifications(unchanged), 1u);

  // kill -9: the merged state was durable before either caller got its answer.
  ASSERT_TRUE(restart(true));
  rapidjson::Document again;
  ASSERT_TRUE(inspect("seed4-on", again));
  EXPECT_EQ(modifications(again), 1u);
  EXPECT_EQ(again["capacity_bytes"].GetUint64(), 2 * GiB);
  EXPECT_STREQ(again["mutable_parameters"]["readAheadKB"].GetString(), "256");
  EXPECT_EQ(read_ahead_of(again), "256");
}

TEST_F(ModifyTest, BerthctlResizeAndModifyGoThroughTheSameMailbox) {
  berthd().extra_args = {"--coalesce-window-ms", "0"}; // and no cooldown
  ASSERT_TRUE(restart(false));
  published_volume("by-hand");
  auto [resized, resize_out] = berthctl("resize by-hand 2G");
  EXPECT_EQ(resized, 0) << resize_out;
  auto [modified, modify_out] = berthctl("modify by-hand readAheadKB=512");
  EXPECT_EQ(modified, 0) << modify_out;
  auto [bad, bad_out] = berthctl("modify by-hand fsType=xfs");
  EXPECT_NE(bad, 0) << bad_out;
  EXPECT_NE(bad_out.find("fsType"), std::string::npos) << bad_out;
  rapidjson::Document doc;
  ASSERT_TRUE(inspect("by-hand", doc));
  EXPECT_EQ(doc["capacity_bytes"].GetUint64(), 2 * GiB);
  EXPECT_EQ(modifications(doc), 2u);
  EXPECT_EQ(read_ahead_of(doc), "512");
}

} // namespace
} // namespace berth::csi_test
