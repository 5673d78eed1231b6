// The durable file helpers (persistence/durable_file.hpp) on a real temp directory.

#include "persistence/durable_file.hpp"

#include <cerrno>
#include <filesystem>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/persistence/temp_dir.hpp"

using namespace berth;
using namespace berth::durable;

TEST(durable_file, an_atomic_write_replaces_the_file_and_leaves_no_temp_file) {
  test::temp_dir dir;
  auto path = dir.path() + "/state.json";
  ASSERT_FALSE(write_file_atomically(dir.path(), path, "one"));
  ASSERT_FALSE(write_file_atomically(dir.path(), path, "two"));
  EXPECT_EQ(test::read_text(path), "two");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(durable_file, a_write_into_a_missing_directory_fails_naming_the_temp_file) {
  test::temp_dir dir;
  auto path = dir.path() + "/missing/state.json";
  auto err = write_file_atomically(dir.path() + "/missing", path, "x");
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find(path + ".tmp"), std::string::npos) << describe(err);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(durable_file, reading_a_missing_file_is_not_an_error_but_not_found) {
  test::temp_dir dir;
  std::string text = "stale";
  bool found = true;
  EXPECT_FALSE(read_file(dir.path() + "/none", text, found));
  EXPECT_FALSE(found);
  ASSERT_FALSE(write_file_atomically(dir.path(), dir.path() + "/f", "abc"));
  EXPECT_FALSE(read_file(dir.path() + "/f", text, found));
  EXPECT_TRUE(found);
  EXPECT_EQ(text, "abc");
}

TEST(durable_file, an_io_error_says_whether_the_disk_was_full) {
  auto err = io_error("cannot write", "/x/journal", ENOSPC);
  EXPECT_TRUE(last_failure_was_no_space());
  EXPECT_NE(describe(err).find("cannot write /x/journal: "), std::string::npos) << describe(err);
  io_error("cannot open", "/x/journal", EACCES);
  EXPECT_FALSE(last_failure_was_no_space());
}

TEST(durable_file, ensure_dir_makes_the_parents_and_refuses_a_file_in_the_way) {
  test::temp_dir dir;
  EXPECT_FALSE(ensure_dir(dir.path() + "/a/b/state"));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() + "/a/b/state"));
  ASSERT_FALSE(write_file_atomically(dir.path(), dir.path() + "/file", "x"));
  auto err = ensure_dir(dir.path() + "/file");
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("cannot use"), std::string::npos) << describe(err);
}
