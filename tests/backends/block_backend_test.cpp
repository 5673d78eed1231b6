// The block backend without root: parameters, capacities, images.
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/block_backend.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "tests/backends/block_fixture.hpp"

namespace berth {
namespace {

using namespace block_test;

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
  EXPECT_EQ(b.image_path(record_kind::volume, "v1"), root + "/block/volumes/v1.img");
  EXPECT_EQ(b.image_path(record_kind::snapshot, "s1"), root + "/block/snapshots/s1.img");
  EXPECT_EQ(b.image_path(static_cast<record_kind>(9), "v1"), "") << "no value of record_kind";
  for (const std::string bad : {"", "..", "../etc", "a/b", ".hidden", "-x"}) {
    EXPECT_EQ(b.image_path(record_kind::volume, bad), "") << bad;
    auto rec = make_record(bad, 16 * mib);
    auto err = b.create(rec);
    ASSERT_TRUE(err) << bad;
    EXPECT_EQ(code_of(err), ec::invalid_argument);
    EXPECT_TRUE(b.remove(rec));
    EXPECT_FALSE(b.stage(rec, {state.path() + "/stage", false, "", {}}));
    EXPECT_TRUE(b.validate(bad, {}));
  }
  auto bad_source = make_record("v1", 400 * mib);
  bad_source.source = volume_source("../../etc/passwd");
  auto err = b.create(bad_source);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::invalid_argument);
  EXPECT_FALSE(fs::exists(root + "/block/volumes/v1.img"));
}

TEST(block_backend_params, docker_mounts_of_a_csi_volume_are_unsupported) {
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
  spec.source = snapshot_source("nope");
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
  ASSERT_TRUE(copy_block_image(b.image_path(src), image, 16 * mib, 30s, "late copy"));
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
  spec.source = volume_source("v1");
  EXPECT_EQ(*b.choose_capacity(spec), 1024 * mib);
  spec.required_bytes = 400 * mib;
  EXPECT_EQ(*b.choose_capacity(spec), 512 * mib);
  spec.limit_bytes = 500 * mib;
  EXPECT_EQ(code_of(b.choose_capacity(spec).error()), ec::out_of_range);

  auto small_clone = make_record("c1", 400 * mib);
  small_clone.source = volume_source("v1");
  EXPECT_EQ(code_of(b.create(small_clone)), ec::out_of_range);
  auto missing = make_record("c2", 600 * mib);
  missing.source = snapshot_source("gone");
  auto miss = b.create(missing);
  ASSERT_TRUE(miss);
  EXPECT_EQ(code_of(miss), ec::not_found);
  EXPECT_TRUE(mentions(miss, "gone")) << describe(miss);

  // Remove deletes the image; twice is fine.
  EXPECT_FALSE(b.remove(rec));
  EXPECT_FALSE(fs::exists(image));
  EXPECT_FALSE(b.remove(rec));
}

} // namespace
} // namespace berth
