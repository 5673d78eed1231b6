#include "persistence/boot_id.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "temp_dir.hpp"

namespace berth {
namespace {

TEST(boot_id, is_trimmed) {
  test::temp_dir tmp;
  test::write_text(tmp / "boot_id", "  4f6c1e0a-93b2-4d8e-a1f7-2c5b9e0d3a61 \n");
  EXPECT_EQ(read_boot_id(tmp / "boot_id"), "4f6c1e0a-93b2-4d8e-a1f7-2c5b9e0d3a61");
}

TEST(boot_id, missing_file_gives_empty) {
  EXPECT_EQ(read_boot_id("/nonexistent/boot_id"), "");
}

TEST(boot_id, reads_the_kernel_one) {
  if (!std::filesystem::exists("/proc/sys/kernel/random/boot_id")) {
    GTEST_SKIP() << "no /proc boot_id here";
  }
  auto id = read_boot_id();
  EXPECT_EQ(id.size(), 36u) << id;
  EXPECT_EQ(read_boot_id(), id);
}

} // namespace
} // namespace berth
