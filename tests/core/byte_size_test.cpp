#include "core/byte_size.hpp"

#include <gtest/gtest.h>

namespace berth {
namespace {

// The messages are the callers' (berthctl's are tested in berthctl_cli_test); here,
// which problem each text has.
TEST(byte_size, names_the_problem_of_each_text) {
  EXPECT_EQ(parse_byte_size("64M").bytes, uint64_t{64} << 20);
  EXPECT_EQ(parse_byte_size("10Gi").bytes, uint64_t{10} << 30);
  EXPECT_EQ(parse_byte_size("4096").bytes, 4096u);
  for (const char* text : {"", "M", "64m", "64MB", "1.5G", " 1", "-1", "1P"}) {
    EXPECT_EQ(parse_byte_size(text).problem, size_problem::not_a_size) << text;
  }
  EXPECT_EQ(parse_byte_size("0G").problem, size_problem::zero);
  EXPECT_EQ(parse_byte_size("16777216T").problem, size_problem::too_large);
  EXPECT_EQ(parse_byte_size("18446744073709551616").problem, size_problem::too_large);
}

} // namespace
} // namespace berth
