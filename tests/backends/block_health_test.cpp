// block_backend::observe without root, over a plain image file and a host view made by
// hand: which condition each sight gives, and that a healthy volume gives none. Real loop
// devices, mounts and filesystems that fail: tests/e2e/volume_health_e2e.sh and
// tests/csi/volume_health_test.cpp.

#include "tests/backends/block_fixture.hpp"

namespace berth {
namespace {

using namespace block_test;

constexpr uint64_t image_bytes = 4 * mib;

class block_health : public ::testing::Test {
protected:
  test::temp_state state;
  block_backend b{state.path()};
  volume_record rec = make_record("v", image_bytes);
  std::string image = b.image_path(record_kind::volume, "v");
  block_backend::host_view host;

  void SetUp() override {
    fs::create_directories(fs::path(image).parent_path());
    std::ofstream{image};
    fs::resize_file(image, image_bytes);
  }

  /// rec staged at /staging from /dev/loop7, which holds the image, and published at /pod.
  void stage() {
    struct stat st {};
    ASSERT_EQ(::stat(image.c_str(), &st), 0);
    host.loops[{st.st_dev, st.st_ino}] = "/dev/loop7";
    rec.staging_path = state.path() + "/staging";
    rec.device = "/dev/loop7";
    rec.published["/pod"] = publication{};
    fs::create_directories(rec.staging_path);
    mount_entry m;
    m.mount_point = rec.staging_path;
    m.source = "/dev/loop7";
    m.fstype = "xfs";
    m.super_options = "rw,attr2,inode64";
    host.mounts[rec.staging_path] = m;
    m.mount_point = "/pod";
    host.mounts["/pod"] = m;
  }

  std::vector<abnormal_reason> reasons() const {
    std::vector<abnormal_reason> out;
    for (const auto& c : b.observe(rec, host)) {
      out.push_back(c.reason);
    }
    return out;
  }
};

using reasons_t = std::vector<abnormal_reason>;

TEST_F(block_health, an_idle_or_staged_volume_whose_host_agrees_is_healthy) {
  EXPECT_EQ(reasons(), reasons_t{});
  stage();
  EXPECT_EQ(reasons(), reasons_t{});
}

TEST_F(block_health, an_image_gone_or_short_says_so_and_what_to_do) {
  fs::resize_file(image, image_bytes / 2);
  auto c = b.observe(rec, host);
  ASSERT_EQ(c.size(), 1U);
  EXPECT_EQ(c[0].reason, abnormal_reason::image_short);
  EXPECT_NE(c[0].message.find("is 2097152 bytes, shorter than the volume's 4194304"),
            std::string::npos)
    << c[0].message;
  fs::remove(image);
  c = b.observe(rec, host);
  ASSERT_EQ(c.size(), 1U);
  EXPECT_EQ(c[0].reason, abnormal_reason::image_missing);
  EXPECT_NE(c[0].message.find(image), std::string::npos) << c[0].message;
  EXPECT_NE(c[0].message.find("restore the volume"), std::string::npos) << c[0].message;
}

TEST_F(block_health, a_staged_volume_whose_device_let_go_of_its_image) {
  stage();
  host.loops.clear();
  EXPECT_EQ(reasons(), reasons_t{abnormal_reason::device_detached});
  host.loops[{1, 2}] = "/dev/loop7"; // the device holds another file now
  auto c = b.observe(rec, host);
  ASSERT_EQ(c.size(), 1U);
  EXPECT_EQ(c[0].reason, abnormal_reason::image_replaced);
  EXPECT_NE(c[0].message.find("/dev/loop7 holds a file that is not the image"), std::string::npos)
    << c[0].message;
}

TEST_F(block_health, mounts_gone_or_covered_by_another_device) {
  stage();
  host.mounts.erase("/pod");
  EXPECT_EQ(reasons(), reasons_t{abnormal_reason::mount_gone});
  host.mounts[rec.staging_path].source = "/dev/sda1";
  EXPECT_EQ(reasons(), (reasons_t{abnormal_reason::mount_foreign, abnormal_reason::mount_gone}))
    << "and the filesystem of another device is not looked at";
  host.mounts.erase(rec.staging_path);
  EXPECT_EQ(reasons(), (reasons_t{abnormal_reason::mount_gone, abnormal_reason::mount_gone}));
}

TEST_F(block_health, a_filesystem_gone_read_only_unless_staged_so) {
  stage();
  host.mounts[rec.staging_path].super_options = "ro,attr2,inode64";
  EXPECT_EQ(reasons(), reasons_t{abnormal_reason::filesystem_read_only});
  rec.stage_flags = {"ro"};
  EXPECT_EQ(reasons(), reasons_t{}) << "staged read-only on purpose";
}

TEST_F(block_health, a_snapshot_or_a_directory_volume_has_no_condition_here) {
  fs::remove(image);
  rec.kind = record_kind::snapshot;
  EXPECT_EQ(reasons(), reasons_t{});
}

} // namespace
} // namespace berth
