#include "backends/mountinfo.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <gtest/gtest.h>

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

} // namespace
} // namespace berth
