// The block backend's modify with root: a size grows the image, the loop device and
// the staged filesystem; readAheadKB and directIO land on the real loop device (sysfs),
// every stage applies the record's parameters, and a parameter the kernel refuses
// changes nothing.

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/mount.h>

#include "backends/block_backend.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "tests/backends/block_fixture.hpp"

namespace berth {
namespace {

using namespace block_test;

/// /sys/block/loopN/REL of `device` ("/dev/loopN"), as the kernel shows it.
std::string sysfs(const std::string& device, const std::string& rel) {
  std::string text = read_text("/sys/block/" + device.substr(5) + "/" + rel);
  while (!text.empty() && text.back() == '\n') {
    text.pop_back();
  }
  return text;
}

std::string read_ahead(const std::string& device) {
  return sysfs(device, "queue/read_ahead_kb");
}

std::string dio(const std::string& device) {
  return sysfs(device, "loop/dio");
}

class block_modify_size_test : public block_backend_test,
                               public ::testing::WithParamInterface<const char*> {};

TEST_P(block_modify_size_test, grows_the_image_the_device_and_the_staged_filesystem) {
  const std::string fs_type = GetParam();
  const uint64_t start = fs_type == "xfs" ? 300 * mib : 64 * mib;
  auto rec = make_record("m1", start, fs_type);
  create_and_stage(rec);
  const std::string pub = target("m1");
  ASSERT_FALSE(publish(rec, pub, {false, false, {}}));
  std::ofstream(pub + "/before.txt") << "still here";
  const uint64_t before = fs_total(rec.staging_path);

  auto shrink = backend_->modify(rec, {start - mib, {}});
  ASSERT_TRUE(shrink);
  EXPECT_EQ(code_of(shrink), ec::out_of_range);

  ASSERT_FALSE(backend_->modify(rec, {2 * start, {}}));
  EXPECT_EQ(*block_image_size(backend_->image_path(rec)), 2 * start);
  EXPECT_EQ(*block_device_size(rec.device), 2 * start) << "the attached device grew too";
  const uint64_t grown = fs_total(rec.staging_path);
  EXPECT_GT(grown, before + start / 2) << "no NodeExpandVolume needed: modify grew the filesystem";
  EXPECT_EQ(fs_total(pub), grown) << "seen through the published bind";

  ASSERT_FALSE(backend_->modify(rec, {2 * start, {}})) << "idempotent";
  EXPECT_EQ(fs_total(rec.staging_path), grown);
  EXPECT_EQ(read_text(pub + "/before.txt"), "still here");
}

INSTANTIATE_TEST_SUITE_P(block, block_modify_size_test, ::testing::Values("xfs", "ext4"));

TEST_F(block_backend_test, modify_of_a_detached_volume_grows_its_image) {
  auto rec = make_record("m2", 64 * mib, "ext4");
  ASSERT_FALSE(backend_->create(rec));
  ASSERT_FALSE(backend_->modify(rec, {96 * mib, {{"readAheadKB", "64"}}}));
  EXPECT_EQ(*block_image_size(backend_->image_path(rec)), 96 * mib);
  EXPECT_TRUE(wait_detached(backend_->image_path(rec))) << "modify attaches nothing";
}

TEST_F(block_backend_test, read_ahead_and_direct_io_land_on_the_attached_loop_device) {
  auto rec = make_record("p1", 64 * mib, "ext4");
  create_and_stage(rec);
  ASSERT_TRUE(is_loop_device_path(rec.device));
  const std::string default_read_ahead = read_ahead(rec.device);
  ASSERT_EQ(dio(rec.device), "1") << "direct I/O is the default";
  ASSERT_NE(default_read_ahead, "512");

  ASSERT_FALSE(backend_->modify(rec, {0, {{"readAheadKB", "512"}, {"directIO", "false"}}}));
  EXPECT_EQ(read_ahead(rec.device), "512");
  EXPECT_EQ(dio(rec.device), "0");
  std::ofstream(rec.staging_path + "/file") << "written with direct I/O off";
  EXPECT_EQ(read_text(rec.staging_path + "/file"), "written with direct I/O off");

  ASSERT_FALSE(backend_->modify(rec, {0, {{"directIO", "true"}}}));
  EXPECT_EQ(dio(rec.device), "1");
  EXPECT_EQ(read_ahead(rec.device), "512") << "a parameter not named is left as it is";
  ASSERT_FALSE(backend_->modify(rec, {0, {{"readAheadKB", "0"}}}));
  EXPECT_EQ(read_ahead(rec.device), "0");
}

TEST_F(block_backend_test, every_stage_applies_the_recorded_parameters) {
  auto rec = make_record("p2", 64 * mib, "ext4");
  rec.mutable_parameters = {{"readAheadKB", "1024"}, {"directIO", "true"}};
  create_and_stage(rec);
  EXPECT_EQ(read_ahead(rec.device), "1024") << "the first stage";
  EXPECT_EQ(dio(rec.device), "1");

  ASSERT_FALSE(backend_->modify(rec, {0, {{"readAheadKB", "256"}}}));
  rec.mutable_parameters["readAheadKB"] = "256"; // as the volume actor commits it
  ASSERT_FALSE(backend_->unstage(rec));
  ASSERT_TRUE(wait_detached(backend_->image_path(rec)));
  rec.staging_path.clear();

  stage_request again{staging("p2"), false, "", {}};
  auto dev = backend_->stage(rec, again);
  ASSERT_TRUE(dev) << describe(dev.error());
  EXPECT_EQ(read_ahead(*dev), "256") << "a new device, set from the record";
  EXPECT_EQ(dio(*dev), "1");
  rec.staging_path = again.staging_path;
  rec.device = *dev;

  // A retried stage (the device stays attached) puts back what someone changed.
  ASSERT_FALSE(set_loop_read_ahead_kb(*dev, 128));
  ASSERT_TRUE(backend_->stage(rec, again));
  EXPECT_EQ(read_ahead(*dev), "256");

  // Raw block staging applies them as well.
  ASSERT_FALSE(backend_->unstage(rec));
  ASSERT_TRUE(wait_detached(backend_->image_path(rec)));
  rec.staging_path.clear();
  stage_request raw{staging("p2-raw"), true, "", {}};
  dev = backend_->stage(rec, raw);
  ASSERT_TRUE(dev) << describe(dev.error());
  EXPECT_EQ(read_ahead(*dev), "256");
  EXPECT_EQ(dio(*dev), "1");
}

TEST_F(block_backend_test, a_failed_size_puts_the_parameters_back) {
  auto rec = make_record("p3", 64 * mib, "ext4");
  ASSERT_FALSE(backend_->create(rec));
  // Attached, but the record claims a filesystem staging that is not mounted: the
  // image and device grow, then growing the filesystem fails.
  stage_request raw{staging("p3"), true, "", {}};
  auto dev = backend_->stage(rec, raw);
  ASSERT_TRUE(dev) << describe(dev.error());
  rec.staging_path = staging("p3");
  rec.device = *dev;
  const std::string before = read_ahead(*dev);
  ASSERT_NE(before, "512");
  ASSERT_EQ(dio(*dev), "1") << "the default";

  auto err = backend_->modify(rec, {96 * mib, {{"readAheadKB", "512"}, {"directIO", "false"}}});
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::failed_precondition) << describe(err);
  EXPECT_EQ(read_ahead(*dev), before) << "put back: " << describe(err);
  EXPECT_EQ(dio(*dev), "1") << "put back";
}

/// Block images on a ramfs, which cannot do O_DIRECT: the kernel refuses
/// LOOP_SET_DIRECT_IO (EINVAL) for their loop devices.
class block_ramfs_test : public block_backend_test {
protected:
  void SetUp() override {
    block_backend_test::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    const std::string dir = root_ + "/ramfs";
    fs::create_directories(dir);
    ASSERT_EQ(::mount("ramfs", dir.c_str(), "ramfs", 0, nullptr), 0) << std::strerror(errno);
    block_space space;
    space.block_dir = dir;
    backend_ = std::make_unique<block_backend>(root_, 120s, space, kubelet_dir());
  }
};

TEST_F(block_ramfs_test, direct_io_refused_by_the_kernel_changes_nothing) {
  auto rec = make_record("r1", 64 * mib, "ext4");
  ASSERT_FALSE(backend_->create(rec));
  const std::string image = backend_->image_path(rec);

  // Detached: the image cannot be opened with O_DIRECT, so the later stage could not apply it.
  auto err = backend_->modify(rec, {96 * mib, {{"directIO", "true"}}});
  ASSERT_TRUE(err) << "directIO accepted on ramfs";
  EXPECT_EQ(code_of(err), ec::invalid_argument);
  EXPECT_TRUE(mentions(err, "volume r1")) << describe(err);
  EXPECT_TRUE(mentions(err, "directIO")) << describe(err);
  EXPECT_TRUE(mentions(err, "O_DIRECT")) << describe(err);
  EXPECT_EQ(*block_image_size(image), 64 * mib) << "the size did not change";

  // Attached: LOOP_SET_DIRECT_IO itself is refused.
  stage_request raw{staging("r1"), true, "", {}};
  auto dev = backend_->stage(rec, raw);
  ASSERT_TRUE(dev) << describe(dev.error());
  rec.staging_path = raw.staging_path;
  rec.staged_block = true;
  const std::string before = read_ahead(*dev);
  ASSERT_NE(before, "512");
  err = backend_->modify(rec, {96 * mib, {{"directIO", "true"}, {"readAheadKB", "512"}}});
  ASSERT_TRUE(err) << "LOOP_SET_DIRECT_IO accepted on ramfs";
  EXPECT_EQ(code_of(err), ec::invalid_argument);
  EXPECT_TRUE(mentions(err, "volume r1")) << describe(err);
  EXPECT_TRUE(mentions(err, "directIO=true")) << describe(err);
  EXPECT_TRUE(mentions(err, "Invalid argument")) << describe(err);
  EXPECT_EQ(dio(*dev), "0");
  EXPECT_EQ(read_ahead(*dev), before) << "nothing else changed";
  EXPECT_EQ(*block_image_size(image), 64 * mib);
  EXPECT_EQ(*block_device_size(*dev), 64 * mib);

  ASSERT_FALSE(backend_->modify(rec, {96 * mib, {{"directIO", "false"}, {"readAheadKB", "512"}}}))
    << "the rest works there";
  EXPECT_EQ(read_ahead(*dev), "512");
  EXPECT_EQ(*block_device_size(*dev), 96 * mib);

  // A record that asks for it fails the stage, which then leaves nothing attached.
  ASSERT_FALSE(backend_->unstage(rec));
  ASSERT_TRUE(wait_detached(image));
  rec.staging_path.clear();
  rec.staged_block = false;
  rec.mutable_parameters = {{"directIO", "true"}};
  auto refused = backend_->stage(rec, raw);
  ASSERT_FALSE(refused) << "staged on ramfs with directIO=true";
  EXPECT_TRUE(mentions(refused.error(), "directIO=true")) << describe(refused.error());
  EXPECT_TRUE(wait_detached(image)) << "the stage's attach was undone";
}

} // namespace
} // namespace berth
