#include "backends/block_backend.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "backends/detail/block_image.hpp"
#include "backends/helper_process.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "core/errors.hpp"
#include "temp_state.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace berth {
namespace {

constexpr uint64_t mib = uint64_t{1} << 20;

ec code_of(const caf::error& err) {
  return static_cast<ec>(err.code());
}

bool mentions(const caf::error& err, const std::string& word) {
  return describe(err).find(word) != std::string::npos;
}

volume_record make_record(const std::string& name, uint64_t capacity,
                          const std::string& fs_type = "xfs") {
  volume_record rec;
  rec.name = name;
  rec.backend = "block";
  rec.options = {{"fsType", fs_type}};
  rec.capacity_bytes = capacity;
  return rec;
}

volume_spec make_spec(uint64_t required, uint64_t limit, const std::string& fs_type = "xfs") {
  volume_spec spec;
  spec.backend = "block";
  spec.parameters = {{"fsType", fs_type}};
  spec.required_bytes = required;
  spec.limit_bytes = limit;
  return spec;
}

std::string read_text(const std::string& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

uint64_t fs_total(const std::string& path) {
  struct statvfs vfs {};
  EXPECT_EQ(::statvfs(path.c_str(), &vfs), 0) << path;
  return static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
}

bool on_path(const std::string& program) {
  auto res = run_helper({"sh", "-c", "command -v " + program}, 5s);
  return res && res->exit_code == 0;
}

/// Waits (up to 2 s) until no loop device backs `image` (a detach while
/// another process holds the device completes at its last close).
bool wait_detached(const std::string& image) {
  for (int i = 0; i < 200; ++i) {
    auto dev = find_loop_device(image);
    if (dev && dev->empty()) {
      return true;
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// -- without root: parameters and capacities ------------------------------------

TEST(block_backend_params, validate_allows_only_known_parameters) {
  test::temp_state state;
  block_backend b(state.path());
  EXPECT_EQ(b.name(), "block");
  EXPECT_FALSE(b.validate("v1", {}));
  EXPECT_FALSE(b.validate("v1", {{"fsType", "xfs"}, {"backend", "block"}}));
  EXPECT_FALSE(b.validate("v1", {{"fsType", "ext4"},
                                 {"csi.storage.k8s.io/pvc/name", "data"},
                                 {"csi.storage.k8s.io/pvc/namespace", "default"}}));
  auto fs_err = b.validate("v1", {{"fsType", "btrfs"}});
  ASSERT_TRUE(fs_err);
  EXPECT_EQ(code_of(fs_err), ec::invalid_argument);
  EXPECT_TRUE(mentions(fs_err, "btrfs")) << describe(fs_err);
  auto be_err = b.validate("v1", {{"backend", "local"}});
  ASSERT_TRUE(be_err);
  EXPECT_TRUE(mentions(be_err, "local")) << describe(be_err);
  auto key_err = b.validate("v1", {{"replicas", "3"}});
  ASSERT_TRUE(key_err);
  EXPECT_EQ(code_of(key_err), ec::invalid_argument);
  EXPECT_TRUE(mentions(key_err, "\"replicas\"")) << describe(key_err);
  EXPECT_TRUE(b.validate("v1", {{"csi.storage.k8s.io", "x"}})) << "the prefix needs its slash";
}

TEST(block_backend_params, names_never_leave_the_state_root) {
  test::temp_state state;
  block_backend b(state.path());
  const std::string root = fs::canonical(state.path()).string();
  EXPECT_EQ(b.image_path(kind_volume, "v1"), root + "/block/volumes/v1.img");
  EXPECT_EQ(b.image_path(kind_snapshot, "s1"), root + "/block/snapshots/s1.img");
  EXPECT_EQ(b.image_path("other", "v1"), "");
  for (const std::string bad : {"", "..", "../etc", "a/b", ".hidden", "-x"}) {
    EXPECT_EQ(b.image_path(kind_volume, bad), "") << bad;
    auto rec = make_record(bad, 16 * mib);
    auto err = b.create(rec);
    ASSERT_TRUE(err) << bad;
    EXPECT_EQ(code_of(err), ec::invalid_argument);
    EXPECT_TRUE(b.remove(rec));
    EXPECT_FALSE(b.stage(rec, {state.path() + "/stage", false, "", {}}));
    EXPECT_TRUE(b.validate(bad, {}));
  }
  auto bad_source = make_record("v1", 400 * mib);
  bad_source.source = "volume:../../etc/passwd";
  auto err = b.create(bad_source);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::invalid_argument);
  EXPECT_FALSE(fs::exists(root + "/block/volumes/v1.img"));
}

TEST(block_backend_params, docker_mounts_are_unsupported) {
  test::temp_state state;
  block_backend b(state.path());
  auto rec = make_record("v1", 16 * mib);
  auto m = b.mount(rec);
  ASSERT_FALSE(m);
  EXPECT_EQ(code_of(m.error()), ec::unsupported);
  EXPECT_EQ(code_of(b.unmount(rec, false)), ec::unsupported);
  EXPECT_EQ(b.mountpoint(rec), "");
}

TEST(block_backend_capacity, rounds_to_the_unit_and_raises_to_the_minimum) {
  test::temp_state state;
  block_backend b(state.path());
  auto cap = [&](uint64_t req, uint64_t lim, const std::string& fs_type = "xfs") {
    return b.choose_capacity(make_spec(req, lim, fs_type));
  };
  EXPECT_EQ(*cap(0, 0), 1024 * mib) << "default 1 GiB";
  EXPECT_EQ(*cap(0, 0, "ext4"), 1024 * mib);
  EXPECT_EQ(*cap(0, 500 * mib + 3), 500 * mib) << "default capped by the limit, rounded down";
  EXPECT_EQ(*cap(0, 100 * mib, "ext4"), 100 * mib);
  EXPECT_EQ(*cap(1, 0), 300 * mib) << "xfs minimum";
  EXPECT_EQ(*cap(1, 0, "ext4"), 16 * mib) << "ext4 minimum";
  EXPECT_EQ(*cap(1, 300 * mib), 300 * mib);
  EXPECT_EQ(*cap(300 * mib + 1, 0), 301 * mib) << "rounded up";
  EXPECT_EQ(*cap(20 * mib, 20 * mib, "ext4"), 20 * mib);
  EXPECT_EQ(*cap(20 * mib - 5, 20 * mib, "ext4"), 20 * mib);
  volume_spec no_fs = make_spec(0, 0);
  no_fs.parameters.clear();
  EXPECT_EQ(*b.choose_capacity(no_fs), 1024 * mib) << "xfs by default";
  no_fs.required_bytes = 1;
  EXPECT_EQ(*b.choose_capacity(no_fs), 300 * mib);
}

TEST(block_backend_capacity, refuses_what_does_not_fit) {
  test::temp_state state;
  block_backend b(state.path());
  struct bad_case {
    uint64_t req, lim;
    std::string fs_type;
  };
  for (const auto& c : std::vector<bad_case>{{1, 200 * mib, "xfs"},    // minimum above limit
                                             {0, 299 * mib, "xfs"},    // default too, minimum too
                                             {0, mib / 2, "ext4"},
                                             {17 * mib + 1, 17 * mib + mib / 2, "ext4"},
                                             {30 * mib, 20 * mib, "ext4"}, // required > limit
                                             {UINT64_MAX, 0, "xfs"}}) {
    auto r = b.choose_capacity(make_spec(c.req, c.lim, c.fs_type));
    ASSERT_FALSE(r) << c.req << " " << c.lim;
    EXPECT_EQ(code_of(r.error()), ec::out_of_range) << describe(r.error());
    EXPECT_TRUE(mentions(r.error(), std::to_string(c.req))) << describe(r.error());
    if (c.lim != 0) {
      EXPECT_TRUE(mentions(r.error(), std::to_string(c.lim))) << describe(r.error());
    }
  }
  auto bad_fs = b.choose_capacity(make_spec(0, 0, "zfs"));
  ASSERT_FALSE(bad_fs);
  EXPECT_EQ(code_of(bad_fs.error()), ec::invalid_argument);
  auto spec = make_spec(0, 0);
  spec.source = "snapshot:nope";
  auto missing = b.choose_capacity(spec);
  ASSERT_FALSE(missing);
  EXPECT_EQ(code_of(missing.error()), ec::not_found);
  EXPECT_TRUE(mentions(missing.error(), "nope"));
  EXPECT_GT(*b.available_capacity(), 0u);
}

TEST(block_backend_create, a_late_copy_never_replaces_a_committed_image) {
  test::temp_state state;
  block_backend b(state.path());
  auto src = make_record("src", 16 * mib);
  ASSERT_FALSE(b.create(src));
  auto rec = make_record("v1", 16 * mib);
  ASSERT_FALSE(b.create(rec));
  const std::string image = b.image_path(rec);
  { std::ofstream{image, std::ios::in | std::ios::out} << "written by the pod"; }
  // A copy that outlived its caller lands after the retry committed the image.
  ASSERT_FALSE(copy_block_image(b.image_path(src), image, 16 * mib, 30s, "late copy"));
  std::ifstream in{image};
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first.substr(0, 18), "written by the pod") << "the committed image was replaced";
}

TEST(block_backend_create, temp_paths_are_unique_and_remove_sweeps_leftovers) {
  test::temp_state state;
  block_backend b(state.path());
  auto rec = make_record("v1", 64 * mib);
  const std::string image = b.image_path(rec);
  EXPECT_NE(block_image_temp_path(image), block_image_temp_path(image))
    << "a late copy must never share its temp file with a retry";
  ASSERT_FALSE(b.create(rec));
  auto leftover = block_image_temp_path(image);
  { std::ofstream{leftover} << "half a copy"; }
  ASSERT_FALSE(b.remove(rec));
  EXPECT_FALSE(fs::exists(image));
  EXPECT_FALSE(fs::exists(leftover)) << "remove sweeps a crash's temp files";
}

TEST(block_backend_create, sparse_idempotent_and_sized_by_source) {
  test::temp_state state;
  block_backend b(state.path());
  auto rec = make_record("v1", 512 * mib);
  ASSERT_FALSE(b.create(rec));
  const std::string image = b.image_path(rec);
  struct stat st {};
  ASSERT_EQ(::stat(image.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 512 * mib);
  EXPECT_LT(st.st_blocks, 64) << "sparse: no data blocks";
  EXPECT_FALSE(b.create(rec)) << "create is idempotent";
  for (const auto& entry : fs::directory_iterator(fs::path(image).parent_path())) {
    EXPECT_NE(entry.path().filename().string().rfind(".v1.tmp", 0), 0u)
      << "temp file left behind: " << entry.path();
  }

  auto other = rec;
  other.capacity_bytes = 600 * mib;
  auto err = b.create(other);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::already_exists);
  auto zero = make_record("v0", 0);
  EXPECT_EQ(code_of(b.create(zero)), ec::invalid_argument);

  // A clone is at least its source.
  auto spec = make_spec(0, 0);
  spec.source = "volume:v1";
  EXPECT_EQ(*b.choose_capacity(spec), 1024 * mib);
  spec.required_bytes = 400 * mib;
  EXPECT_EQ(*b.choose_capacity(spec), 512 * mib);
  spec.limit_bytes = 500 * mib;
  EXPECT_EQ(code_of(b.choose_capacity(spec).error()), ec::out_of_range);

  auto small_clone = make_record("c1", 400 * mib);
  small_clone.source = "volume:v1";
  EXPECT_EQ(code_of(b.create(small_clone)), ec::out_of_range);
  auto missing = make_record("c2", 600 * mib);
  missing.source = "snapshot:gone";
  auto miss = b.create(missing);
  ASSERT_TRUE(miss);
  EXPECT_EQ(code_of(miss), ec::not_found);
  EXPECT_TRUE(mentions(miss, "gone")) << describe(miss);

  // Remove deletes the image; twice is fine.
  EXPECT_FALSE(b.remove(rec));
  EXPECT_FALSE(fs::exists(image));
  EXPECT_FALSE(b.remove(rec));
}

// -- with root: real loop devices, mkfs and mounts -------------------------------

class block_backend_test : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!test::is_root()) {
      why = "needs root";
    } else if (::access("/dev/loop-control", R_OK | W_OK) != 0) {
      why = "needs /dev/loop-control";
    } else {
      for (const char* tool : {"mkfs.xfs", "mkfs.ext4", "blkid", "xfs_growfs", "resize2fs"}) {
        if (!on_path(tool)) {
          why = std::string("needs ") + tool;
          break;
        }
      }
    }
    if (!why.empty()) {
      std::cerr << "\n***** SKIPPED: block backend tests " << why << " *****\n\n";
      GTEST_SKIP() << "SKIPPED: block backend tests " << why;
    }
    ASSERT_FALSE(state_.path().empty());
    root_ = fs::canonical(state_.path()).string();
    backend_ = std::make_unique<block_backend>(root_, 120s);
  }

  /// Unmounts everything under the state dir and detaches its loop devices,
  /// even when a test failed halfway.
  void TearDown() override {
    if (!root_.empty()) {
      for (int round = 0; round < 8; ++round) {
        auto points = read_mount_points();
        std::vector<std::string> mine;
        for (const auto& p : points ? *points : std::set<std::string>{}) {
          if (p.compare(0, root_.size() + 1, root_ + "/") == 0) {
            mine.push_back(p);
          }
        }
        if (mine.empty()) {
          break;
        }
        std::sort(mine.begin(), mine.end(),
                  [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
        for (const auto& p : mine) {
          ::umount2(p.c_str(), MNT_DETACH);
        }
      }
      for (const auto& [device, backing] : list_loop_devices()) {
        if (backing.compare(0, root_.size() + 1, root_ + "/") == 0) {
          detach_loop_device(device);
        }
      }
    }
    state_.cleanup();
  }

  std::string staging(const std::string& name) const {
    return root_ + "/kubelet/staging/" + name;
  }
  std::string target(const std::string& name, const std::string& pod = "pod1") const {
    return root_ + "/kubelet/pods/" + pod + "/" + name;
  }

  /// create + stage (filesystem); records the staging path and device.
  void create_and_stage(volume_record& rec, std::vector<std::string> flags = {}) {
    ASSERT_FALSE(backend_->create(rec));
    stage_request req{staging(rec.name), false, "", flags};
    auto dev = backend_->stage(rec, req);
    ASSERT_TRUE(dev) << describe(dev.error());
    rec.staging_path = req.staging_path;
    rec.stage_flags = flags;
    rec.device = *dev;
  }

  test::temp_state state_;
  std::string root_;
  std::unique_ptr<block_backend> backend_;
};

TEST_F(block_backend_test, stage_formats_once_and_unstage_detaches) {
  auto rec = make_record("v1", 300 * mib); // the xfs minimum must be formattable
  create_and_stage(rec, {"noatime", "nodev"});
  EXPECT_TRUE(is_loop_device_path(rec.device));
  EXPECT_TRUE(is_mount_point(rec.staging_path));
  auto blkid = run_helper({"blkid", "-p", "-o", "value", "-s", "TYPE", rec.device}, 10s);
  ASSERT_TRUE(blkid);
  EXPECT_EQ(blkid->out, "xfs\n");
  auto again = backend_->stage(rec, {rec.staging_path, false, "", rec.stage_flags});
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, rec.device) << "stage is idempotent";
  std::ofstream(rec.staging_path + "/kept.txt") << "survives a restage";

  ASSERT_FALSE(backend_->unstage(rec));
  EXPECT_FALSE(is_mount_point(rec.staging_path));
  EXPECT_TRUE(wait_detached(backend_->image_path(rec)));
  EXPECT_FALSE(backend_->unstage(rec)) << "unstage is idempotent";

  auto dev = backend_->stage(rec, {rec.staging_path, false, "", {}});
  ASSERT_TRUE(dev) << describe(dev.error());
  EXPECT_EQ(read_text(rec.staging_path + "/kept.txt"), "survives a restage") << "no re-mkfs";

  // Another filesystem than the one on the device is refused, never reformatted.
  ASSERT_FALSE(backend_->unstage(rec));
  auto wrong = backend_->stage(rec, {rec.staging_path, false, "ext4", {}});
  ASSERT_FALSE(wrong);
  EXPECT_EQ(code_of(wrong.error()), ec::failed_precondition);
  EXPECT_TRUE(mentions(wrong.error(), "xfs") && mentions(wrong.error(), "ext4"))
    << describe(wrong.error());
  EXPECT_TRUE(wait_detached(backend_->image_path(rec))) << "a failed stage leaves nothing attached";
  ASSERT_FALSE(backend_->remove(rec));
}

TEST_F(block_backend_test, bad_stage_requests_are_rejected_before_any_side_effect) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  ASSERT_FALSE(backend_->create(rec));
  auto flag = backend_->stage(rec, {staging("v1"), false, "", {"noatime", "bogus=1"}});
  ASSERT_FALSE(flag);
  EXPECT_EQ(code_of(flag.error()), ec::invalid_argument);
  EXPECT_TRUE(mentions(flag.error(), "bogus=1")) << describe(flag.error());
  auto inject = backend_->stage(rec, {staging("v1"), false, "", {"data=ordered,context=x"}});
  ASSERT_FALSE(inject);
  EXPECT_TRUE(mentions(inject.error(), "context=x")) << describe(inject.error());
  auto fs_type = backend_->stage(rec, {staging("v1"), false, "vfat", {}});
  ASSERT_FALSE(fs_type);
  EXPECT_EQ(code_of(fs_type.error()), ec::invalid_argument);
  auto rel = backend_->stage(rec, {"relative/path", false, "", {}});
  ASSERT_FALSE(rel);
  EXPECT_EQ(code_of(rel.error()), ec::invalid_argument);
  auto dots = backend_->stage(rec, {staging("v1") + "/../../x", false, "", {}});
  ASSERT_FALSE(dots);
  fs::create_directories(root_ + "/elsewhere");
  fs::create_directories(fs::path(staging("link")).parent_path());
  fs::create_symlink(root_ + "/elsewhere", staging("link"));
  auto link = backend_->stage(rec, {staging("link"), false, "", {}});
  ASSERT_FALSE(link) << "a mount through a symlink would land where unstage never looks";
  EXPECT_EQ(code_of(link.error()), ec::invalid_argument);
  EXPECT_TRUE(mentions(link.error(), "symbolic link")) << describe(link.error());
  auto none = find_loop_device(backend_->image_path(rec));
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, "");
  auto missing = make_record("nope", 32 * mib);
  auto nf = backend_->stage(missing, {staging("nope"), false, "", {}});
  ASSERT_FALSE(nf);
  EXPECT_EQ(code_of(nf.error()), ec::not_found);
}

TEST_F(block_backend_test, publish_read_write_and_read_only) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  create_and_stage(rec, {"nosuid"});
  const std::string rw = target("v1", "pod-rw");
  const std::string ro = target("v1", "pod-ro");
  ASSERT_FALSE(backend_->publish(rec, rw, {false, false, {"noexec"}}));
  ASSERT_FALSE(backend_->publish(rec, rw, {false, false, {"noexec"}})) << "idempotent";
  ASSERT_FALSE(backend_->publish(rec, ro, {true, false, {}}));
  std::ofstream(rw + "/hello.txt") << "written through rw";
  EXPECT_EQ(read_text(ro + "/hello.txt"), "written through rw");
  errno = 0;
  int fd = ::open((ro + "/nope.txt").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  EXPECT_LT(fd, 0);
  EXPECT_EQ(errno, EROFS);
  struct statvfs vfs {};
  ASSERT_EQ(::statvfs(rw.c_str(), &vfs), 0);
  EXPECT_TRUE(vfs.f_flag & ST_NOEXEC);
  EXPECT_TRUE(vfs.f_flag & ST_NOSUID) << "the stage's flags survive the remount";
  EXPECT_FALSE(vfs.f_flag & ST_RDONLY);

  auto bad = backend_->publish(rec, target("v1", "pod-bad"), {false, false, {"shared"}});
  ASSERT_TRUE(bad);
  EXPECT_EQ(code_of(bad), ec::invalid_argument);
  EXPECT_FALSE(fs::exists(target("v1", "pod-bad")));

  ASSERT_FALSE(backend_->unpublish(rec, rw));
  EXPECT_FALSE(fs::exists(rw)) << "unpublish removes the target";
  EXPECT_FALSE(backend_->unpublish(rec, rw)) << "idempotent";
  ASSERT_FALSE(backend_->unpublish(rec, ro));
  EXPECT_FALSE(fs::exists(ro));
  EXPECT_TRUE(fs::exists(rec.staging_path + "/hello.txt")) << "only the bind went away";

  ASSERT_FALSE(backend_->unstage(rec));
  auto unstaged = backend_->publish(rec, rw, {false, false, {}});
  ASSERT_TRUE(unstaged);
  EXPECT_EQ(code_of(unstaged), ec::failed_precondition);
}

TEST_F(block_backend_test, raw_block_stage_publish_and_stats) {
  auto rec = make_record("b1", 64 * mib);
  ASSERT_FALSE(backend_->create(rec));
  stage_request req{staging("b1"), true, "", {}};
  auto dev = backend_->stage(rec, req);
  ASSERT_TRUE(dev) << describe(dev.error());
  EXPECT_EQ(*backend_->stage(rec, req), *dev);
  EXPECT_FALSE(is_mount_point(req.staging_path)) << "raw block mounts nothing at stage";
  rec.staging_path = req.staging_path;
  rec.staged_block = true;
  rec.device = *dev;

  const std::string file = target("b1");
  ASSERT_FALSE(backend_->publish(rec, file, {false, true, {}}));
  ASSERT_FALSE(backend_->publish(rec, file, {false, true, {}})) << "idempotent";
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_TRUE(S_ISBLK(st.st_mode));
  auto size = block_device_size(file);
  ASSERT_TRUE(size);
  EXPECT_EQ(*size, 64 * mib);

  auto s = backend_->stats(rec, file);
  ASSERT_TRUE(s) << describe(s.error());
  EXPECT_TRUE(s->block);
  EXPECT_FALSE(s->abnormal) << s->message;
  EXPECT_EQ(s->total_bytes, 64 * mib);
  auto at_stage = backend_->stats(rec, rec.staging_path);
  ASSERT_TRUE(at_stage);
  EXPECT_FALSE(at_stage->abnormal) << at_stage->message;

  ASSERT_FALSE(backend_->expand(rec, 96 * mib));
  auto grown = backend_->grow_filesystem(rec);
  ASSERT_TRUE(grown) << describe(grown.error());
  EXPECT_EQ(*grown, 96 * mib) << "raw block: the device size";

  ASSERT_FALSE(backend_->unpublish(rec, file));
  EXPECT_FALSE(fs::exists(file)) << "the file target is deleted";
  EXPECT_TRUE(fs::exists(*dev)) << "never the device node itself";

  // Remove detaches a device that is still attached.
  ASSERT_FALSE(backend_->remove(rec));
  EXPECT_TRUE(wait_detached(backend_->image_path(rec)));
  EXPECT_FALSE(fs::exists(backend_->image_path(rec)));
  EXPECT_FALSE(backend_->unstage(rec)) << "unstage after remove is still success";
}

TEST_F(block_backend_test, remove_refuses_a_mounted_volume) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  create_and_stage(rec);
  auto err = backend_->remove(rec);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::in_use);
  EXPECT_TRUE(fs::exists(backend_->image_path(rec)));
  ASSERT_FALSE(backend_->unstage(rec));
  ASSERT_FALSE(backend_->remove(rec));
  EXPECT_FALSE(fs::exists(backend_->image_path(rec)));
}

class block_backend_grow_test : public block_backend_test,
                                public ::testing::WithParamInterface<const char*> {};

TEST_P(block_backend_grow_test, expand_and_grow_while_published) {
  const std::string fs_type = GetParam();
  const uint64_t start = fs_type == "xfs" ? 300 * mib : 64 * mib;
  auto rec = make_record("g1", start, fs_type);
  create_and_stage(rec);
  const std::string pub = target("g1");
  ASSERT_FALSE(backend_->publish(rec, pub, {false, false, {}}));
  std::ofstream(pub + "/before.txt") << "still here";
  const uint64_t before = fs_total(pub);

  auto shrink = backend_->expand(rec, start - mib);
  ASSERT_TRUE(shrink);
  EXPECT_EQ(code_of(shrink), ec::out_of_range);

  ASSERT_FALSE(backend_->expand(rec, 2 * start));
  ASSERT_FALSE(backend_->expand(rec, 2 * start)) << "idempotent";
  EXPECT_EQ(*block_device_size(rec.device), 2 * start) << "the attached device grew too";
  EXPECT_EQ(fs_total(pub), before) << "the filesystem grows only at NodeExpand";

  auto grown = backend_->grow_filesystem(rec);
  ASSERT_TRUE(grown) << describe(grown.error());
  EXPECT_GT(*grown, before + start / 2);
  EXPECT_EQ(fs_total(pub), *grown) << "seen through the published bind";
  auto again = backend_->grow_filesystem(rec);
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, *grown) << "idempotent";
  EXPECT_EQ(read_text(pub + "/before.txt"), "still here");
  EXPECT_TRUE(is_mount_point(pub));
}

INSTANTIATE_TEST_SUITE_P(block, block_backend_grow_test, ::testing::Values("xfs", "ext4"));

/// True when this process may resize ext4 online (CAP_SYS_RESOURCE, bit 24).
bool can_resize_ext4_online() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 7, "CapEff:") == 0) {
      return (std::stoull(line.substr(7), nullptr, 16) >> 24) & 1;
    }
  }
  return false;
}

TEST_F(block_backend_test, ext4_offline_fallback_puts_everything_back_when_busy) {
  if (can_resize_ext4_online()) {
    std::cerr << "\n***** SKIPPED: ext4 online resize works here (CAP_SYS_RESOURCE); "
                 "the offline fallback is not reached *****\n\n";
    GTEST_SKIP() << "SKIPPED: the kernel resizes ext4 online here";
  }
  auto rec = make_record("busy", 64 * mib, "ext4");
  create_and_stage(rec, {"nosuid"});
  const std::string pub = target("busy");
  ASSERT_FALSE(backend_->publish(rec, pub, {true, false, {"noexec"}}));
  ASSERT_FALSE(backend_->expand(rec, 128 * mib));
  const uint64_t before = fs_total(pub);
  {
    int fd = ::open((rec.staging_path + "/open.txt").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    auto busy = backend_->grow_filesystem(rec);
    ::close(fd);
    ASSERT_FALSE(busy);
    EXPECT_EQ(code_of(busy.error()), ec::in_use) << describe(busy.error());
    EXPECT_TRUE(is_mount_point(rec.staging_path));
    EXPECT_TRUE(is_mount_point(pub)) << "the published bind was put back";
    EXPECT_EQ(fs_total(pub), before);
  }
  auto grown = backend_->grow_filesystem(rec);
  ASSERT_TRUE(grown) << describe(grown.error());
  EXPECT_GT(*grown, before);
  struct statvfs vfs {};
  ASSERT_EQ(::statvfs(pub.c_str(), &vfs), 0);
  EXPECT_TRUE(vfs.f_flag & ST_RDONLY) << "re-bound with its flags";
  EXPECT_TRUE(vfs.f_flag & ST_NOEXEC);
  EXPECT_TRUE(vfs.f_flag & ST_NOSUID);
  ASSERT_EQ(::statvfs(rec.staging_path.c_str(), &vfs), 0);
  EXPECT_FALSE(vfs.f_flag & ST_RDONLY);
  EXPECT_TRUE(vfs.f_flag & ST_NOSUID) << "the stage flags are used again";
  EXPECT_TRUE(fs::exists(pub + "/open.txt"));
}

TEST_F(block_backend_test, snapshot_then_restore_into_a_new_volume) {
  auto rec = make_record("src", 300 * mib);
  create_and_stage(rec);
  const std::string pub = target("src");
  ASSERT_FALSE(backend_->publish(rec, pub, {false, false, {}}));
  std::ofstream(pub + "/data.txt") << "in the snapshot";

  volume_record snap;
  snap.name = "snap1";
  snap.backend = "block";
  snap.kind = kind_snapshot;
  snap.source = "volume:src";
  volume_spec sspec;
  sspec.kind = kind_snapshot;
  sspec.source = snap.source;
  EXPECT_EQ(*backend_->choose_capacity(sspec), 300 * mib);
  ASSERT_FALSE(backend_->create(snap)) << "taken while the source is mounted";
  ASSERT_FALSE(backend_->create(snap)) << "idempotent";
  EXPECT_TRUE(fs::exists(root_ + "/block/snapshots/snap1.img"));
  std::ofstream(pub + "/later.txt") << "after the snapshot";

  auto restored = make_record("dst", 400 * mib);
  restored.source = "snapshot:snap1";
  create_and_stage(restored); // while src is still mounted: same xfs UUID
  EXPECT_EQ(read_text(restored.staging_path + "/data.txt"), "in the snapshot");
  EXPECT_FALSE(fs::exists(restored.staging_path + "/later.txt"));
  auto grown = backend_->grow_filesystem(restored);
  ASSERT_TRUE(grown) << describe(grown.error());
  EXPECT_GT(*grown, fs_total(rec.staging_path) + 90 * mib)
    << "the copy (400 MiB) grew past its source (300 MiB)";

  auto missing = snap;
  missing.name = "snap2";
  missing.source = "volume:nope";
  auto err = backend_->create(missing);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::not_found);
  EXPECT_TRUE(mentions(err, "nope")) << describe(err);

  ASSERT_FALSE(backend_->remove(snap));
  EXPECT_FALSE(fs::exists(root_ + "/block/snapshots/snap1.img"));
}

TEST_F(block_backend_test, stats_normal_then_abnormal_after_the_mount_vanishes) {
  auto rec = make_record("st", 64 * mib, "ext4");
  create_and_stage(rec);
  const std::string pub = target("st");
  ASSERT_FALSE(backend_->publish(rec, pub, {false, false, {}}));
  std::ofstream(pub + "/f.txt") << std::string(1 << 20, 'x');
  ::sync();
  auto s = backend_->stats(rec, pub);
  ASSERT_TRUE(s) << describe(s.error());
  EXPECT_FALSE(s->abnormal) << s->message;
  EXPECT_FALSE(s->block);
  EXPECT_GT(s->total_bytes, 32 * mib);
  EXPECT_LE(s->total_bytes, 64 * mib);
  EXPECT_GE(s->used_bytes, 1 * mib);
  EXPECT_GT(s->available_bytes, 0u);
  EXPECT_GT(s->total_inodes, 0u);
  EXPECT_GT(s->used_inodes, 0u);
  EXPECT_EQ(s->used_inodes + s->free_inodes, s->total_inodes);
  auto staged = backend_->stats(rec, rec.staging_path);
  ASSERT_TRUE(staged);
  EXPECT_EQ(staged->total_bytes, s->total_bytes);

  ASSERT_EQ(::umount2(pub.c_str(), MNT_DETACH), 0);
  auto gone = backend_->stats(rec, pub);
  ASSERT_TRUE(gone) << "an abnormal volume is a condition, not an error";
  EXPECT_TRUE(gone->abnormal);
  EXPECT_NE(gone->message.find(pub), std::string::npos) << gone->message;
  ASSERT_FALSE(backend_->unpublish(rec, pub));
  EXPECT_FALSE(fs::exists(pub));
}

} // namespace
} // namespace berth
