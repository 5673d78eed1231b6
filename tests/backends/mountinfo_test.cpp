#include "backends/mountinfo.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <set>

#include <gtest/gtest.h>
#include <sys/sysmacros.h>

#include "core/errors.hpp"
#include "temp_state.hpp"

namespace berth {
namespace {

std::string write_file(const std::string& dir, const std::string& text) {
  std::string path = dir + "/mountinfo";
  std::ofstream(path) << text;
  return path;
}

TEST(mountinfo, parses_fields_and_optional_fields) {
  test::temp_state state;
  auto path = write_file(state.path(),
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
    "36 22 98:0 /mnt1 /mnt2 rw,noatime master:1 propagate_from:2 - ext3 /dev/root rw\n"
    "37 22 0:5 / /no/optional rw - tmpfs tmpfs rw,size=1k\n");
  auto entries = read_mountinfo(path);
  ASSERT_TRUE(entries) << describe(entries.error());
  ASSERT_EQ(entries->size(), 3u);
  const auto& e = (*entries)[1];
  EXPECT_EQ(e.id, 36);
  EXPECT_EQ(e.parent, 22);
  EXPECT_EQ(e.root, "/mnt1");
  EXPECT_EQ(e.mount_point, "/mnt2");
  EXPECT_EQ(e.options, "rw,noatime");
  EXPECT_EQ(e.fstype, "ext3");
  EXPECT_EQ(e.source, "/dev/root");
  EXPECT_EQ(e.super_options, "rw");
  EXPECT_EQ((*entries)[2].mount_point, "/no/optional");
  EXPECT_EQ((*entries)[2].super_options, "rw,size=1k");
}

TEST(mountinfo, decodes_octal_escapes) {
  test::temp_state state;
  auto path = write_file(state.path(),
    "40 22 0:50 /a\\134b /mnt/with\\040space\\011tab\\012nl rw - fuse.x src\\040x rw\n");
  auto entries = read_mountinfo(path);
  ASSERT_TRUE(entries) << describe(entries.error());
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].root, "/a\\b");
  EXPECT_EQ((*entries)[0].mount_point, "/mnt/with space\ttab\nnl");
  EXPECT_EQ((*entries)[0].source, "src x");
  auto points = read_mount_points(path);
  ASSERT_TRUE(points);
  EXPECT_EQ(points->count("/mnt/with space\ttab\nnl"), 1u);
  EXPECT_EQ(unescape_mountinfo("\\12x\\"), "\\12x\\"); // incomplete escapes stay
}

TEST(mountinfo, malformed_line_names_file_and_line) {
  test::temp_state state;
  auto path = write_file(state.path(),
    "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
    "23 22 8:1 / /x rw shared:1 ext4 /dev/sda1 rw\n");
  auto entries = read_mountinfo(path);
  ASSERT_FALSE(entries);
  auto msg = describe(entries.error());
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("line 2"), std::string::npos) << msg;
  EXPECT_FALSE(read_mountinfo(state.path() + "/missing"));
}

TEST(mountinfo, reads_the_real_file) {
  auto entries = read_mountinfo();
  ASSERT_TRUE(entries) << describe(entries.error());
  ASSERT_FALSE(entries->empty());
  bool root = false;
  for (const auto& e : *entries) {
    root = root || e.mount_point == "/";
  }
  EXPECT_TRUE(root);
  EXPECT_TRUE(is_mounted("/"));
  EXPECT_TRUE(is_mount_point("/"));
  EXPECT_TRUE(is_mounted("/proc"));
  EXPECT_FALSE(is_mounted("/definitely/not/a/mount"));
  EXPECT_FALSE(is_mount_point("/definitely/not/a/mount"));
  auto points = read_mount_points();
  ASSERT_TRUE(points);
  EXPECT_EQ(points->count("/proc"), 1u);
}

TEST(mountinfo, parses_ten_thousand_entries_fast) {
  test::temp_state state;
  std::string text;
  for (int i = 0; i < 10000; ++i) {
    text += std::to_string(100 + i) + " 22 0:" + std::to_string(i)
            + " /var/lib/berth/volumes/v" + std::to_string(i)
            + "/data /var/lib/berth/volumes/v" + std::to_string(i)
            + "/mnt rw,relatime shared:1 - ext4 /dev/nvme0n1p1 rw,discard\n";
  }
  auto path = write_file(state.path(), text);
  auto start = std::chrono::steady_clock::now();
  auto entries = read_mountinfo(path);
  auto mid = std::chrono::steady_clock::now();
  auto points = read_mount_points(path);
  auto end = std::chrono::steady_clock::now();
  auto cpu = test::thread_cpu_us();
  auto parsed = parse_mountinfo(text, "memory");
  auto parse_end = std::chrono::steady_clock::now();
  cpu = test::thread_cpu_us() - cpu;
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->size(), 10000u);
  // Again, as a long-running daemon does: malloc now reuses memory, no fresh page faults.
  parsed = std::vector<mount_entry>{};
  auto again_start = std::chrono::steady_clock::now();
  auto again = parse_mountinfo(text, "memory");
  auto again_end = std::chrono::steady_clock::now();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->size(), 10000u);
  ASSERT_TRUE(entries);
  ASSERT_TRUE(points);
  EXPECT_EQ(entries->size(), 10000u);
  EXPECT_EQ(points->size(), 10000u);
  using us = std::chrono::microseconds;
  std::cout << "[ perf ] read_mountinfo 10000 entries: "
            << std::chrono::duration_cast<us>(mid - start).count() << " us; read_mount_points: "
            << std::chrono::duration_cast<us>(end - mid).count()
            << " us; parse_mountinfo in memory: "
            << std::chrono::duration_cast<us>(parse_end - end).count() << " us (" << cpu
            << " us CPU); parse_mountinfo again (warm heap): "
            << std::chrono::duration_cast<us>(again_end - again_start).count() << " us\n";
}

// -- where a mount comes from -------------------------------------------------------

/// The mountinfo of a host with a volume staged on /dev/loop3 (7:3), published at
/// two targets, a raw block node bound from /dev, and foreign mounts.
constexpr const char* owned_text =
  "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
  "23 22 0:5 / /dev rw,nosuid - devtmpfs udev rw\n"
  "40 22 7:3 / /k/staging/v rw,relatime - xfs /dev/loop3 rw\n"
  "41 22 7:3 / /k/pods/a/v rw,relatime - xfs /dev/loop3 rw\n"
  "42 22 7:3 / /k/pods/b/v ro,relatime - xfs /dev/loop3 rw\n"
  "43 22 7:3 /sub /k/pods/c/v rw,relatime - xfs /dev/loop3 rw\n"
  "44 22 0:5 /loop3 /k/pods/d/v rw,nosuid - devtmpfs udev rw\n"
  "50 41 0:60 / /k/pods/a/v rw - tmpfs tmpfs rw\n"
  "51 22 0:61 / /k/pods/e/v rw - tmpfs tmpfs rw\n"
  "60 51 7:3 / /k/pods/e/v rw - xfs /dev/loop3 rw\n";

TEST(mountinfo, parses_the_device_number) {
  auto entries = parse_mountinfo(owned_text, "memory");
  ASSERT_TRUE(entries) << describe(entries.error());
  EXPECT_EQ((*entries)[2].dev, "7:3");
  EXPECT_EQ((*entries)[1].dev, "0:5");
  EXPECT_FALSE(parse_mountinfo("22 1 nodev / / rw - ext4 /dev/sda1 rw\n", "memory"))
    << "a device field without major:minor is malformed";
}

TEST(mountinfo, mounts_at_orders_a_stack_bottom_first) {
  auto entries = parse_mountinfo(owned_text, "memory");
  ASSERT_TRUE(entries);
  auto a = mounts_at(*entries, "/k/pods/a/v");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a.front()->id, 41);
  EXPECT_EQ(a.back()->id, 50) << "the tmpfs is on top";
  auto e = mounts_at(*entries, "/k/pods/e/v");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e.back()->id, 60);
  EXPECT_TRUE(mounts_at(*entries, "/k/pods").empty());
}

// Found by tests/fuzz/mountinfo_fuzz: a mount that is its own parent was stacked twice,
// in place of another mount at the same point, which went missing.
TEST(mountinfo, mounts_at_returns_each_mount_once_whatever_the_parent_links) {
  auto entries = parse_mountinfo("1 9 8:1 / /p rw - ext4 /dev/a rw\n"
                                 "2 1 8:1 / /p rw - ext4 /dev/b rw\n"
                                 "2 2 8:1 / /p rw - ext4 /dev/c rw\n"
                                 "3 7 8:1 / /p rw - ext4 /dev/d rw\n",
                                 "memory");
  ASSERT_TRUE(entries);
  auto p = mounts_at(*entries, "/p");
  ASSERT_EQ(p.size(), 4u);
  std::set<std::string> sources;
  for (auto* e : p) {
    sources.insert(e->source);
  }
  EXPECT_EQ(sources, (std::set<std::string>{"/dev/a", "/dev/b", "/dev/c", "/dev/d"}));
}

TEST(mountinfo, origin_of_a_path_is_its_mounts_device_and_root_plus_the_rest) {
  auto entries = parse_mountinfo(owned_text, "memory");
  ASSERT_TRUE(entries);
  auto staging = origin_of(*entries, "/k/staging/v");
  ASSERT_TRUE(staging);
  EXPECT_EQ(*staging, (mount_origin{"7:3", "/"}));
  auto node = origin_of(*entries, "/dev/loop3");
  ASSERT_TRUE(node);
  EXPECT_EQ(*node, (mount_origin{"0:5", "/loop3"})) << "a device node bound from /dev";
  auto inside = origin_of(*entries, "/k/staging/v/sub/dir");
  ASSERT_TRUE(inside);
  EXPECT_EQ(*inside, (mount_origin{"7:3", "/sub/dir"}));
  auto root = origin_of(*entries, "/etc");
  ASSERT_TRUE(root);
  EXPECT_EQ(*root, (mount_origin{"8:1", "/etc"}));
  EXPECT_FALSE(origin_of(std::vector<mount_entry>{}, "/x"));
}

TEST(mountinfo, a_volume_owns_its_binds_and_nothing_else) {
  auto entries = parse_mountinfo(owned_text, "memory");
  ASSERT_TRUE(entries);
  mount_origin fs{"7:3", "/"};
  auto node = origin_of(*entries, "/dev/loop3");
  ASSERT_TRUE(node);
  auto top = [&](const std::string& at) { return origin_of(*mounts_at(*entries, at).back()); };
  EXPECT_EQ(top("/k/pods/b/v"), fs) << "a read-only bind of the filesystem";
  EXPECT_FALSE(top("/k/pods/c/v") == fs) << "a bind of a subdirectory is not the volume";
  EXPECT_EQ(top("/k/pods/d/v"), *node) << "the raw block bind";
  EXPECT_FALSE(top("/k/pods/a/v") == fs) << "the tmpfs on top is foreign";
  EXPECT_FALSE(top("/k/pods/d/v") == fs);
  EXPECT_FALSE((mount_origin{"7:4", "/"}) == fs) << "another loop device";
}

TEST(mountinfo, is_read_only_reads_the_per_mount_options) {
  EXPECT_TRUE(is_read_only("ro,relatime"));
  EXPECT_TRUE(is_read_only("nosuid,ro"));
  EXPECT_FALSE(is_read_only("rw,relatime"));
  EXPECT_FALSE(is_read_only("rw,errors=ro"));
  EXPECT_FALSE(is_read_only(""));
}

TEST(mountinfo, dev_string_is_major_colon_minor) {
  EXPECT_EQ(dev_string(makedev(7, 3)), "7:3");
  EXPECT_EQ(dev_string(makedev(259, 65536)), "259:65536");
}

} // namespace
} // namespace berth
