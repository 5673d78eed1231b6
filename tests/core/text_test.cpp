#include "core/text.hpp"

#include <gtest/gtest.h>

using berth::has_control_char;
using berth::max_quoted_bytes;
using berth::quote_input;
using berth::short_id;

TEST(short_id, keeps_twelve_characters_and_marks_the_cut) {
  EXPECT_EQ(short_id("c89a0f0e1d2c3b4a5968"), "c89a0f0e1d2c…");
  EXPECT_EQ(short_id("c89a0f0e1d2c"), "c89a0f0e1d2c");
  EXPECT_EQ(short_id("gave-up"), "gave-up");
  EXPECT_EQ(short_id(""), "");
}

TEST(has_control_char, finds_bytes_below_space_and_delete) {
  EXPECT_FALSE(has_control_char(""));
  EXPECT_FALSE(has_control_char("/var/lib/berth ok-é"));
  EXPECT_TRUE(has_control_char("a\nb"));
  EXPECT_TRUE(has_control_char(std::string("a\0b", 3)));
  EXPECT_TRUE(has_control_char("a\x1f"));
  EXPECT_TRUE(has_control_char("a\x7f"));
  EXPECT_FALSE(has_control_char("\x80\xff"));
}

TEST(quote_input, escapes_quotes_backslashes_and_control_characters) {
  EXPECT_EQ(quote_input("v1"), R"("v1")");
  EXPECT_EQ(quote_input("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(quote_input(std::string("a\x01\x7f", 3)), R"("a\x01\x7f")");
  EXPECT_EQ(quote_input(std::string("\0", 1)), R"("\x00")");
  EXPECT_EQ(quote_input("a\"b\n"), "\"a\\\"b\\x0a\"");
}

TEST(quote_input, cuts_long_input_after_the_documented_bound) {
  EXPECT_EQ(max_quoted_bytes, 200u);
  auto whole = std::string(max_quoted_bytes, 'x');
  EXPECT_EQ(quote_input(whole), "\"" + whole + "\"");
  EXPECT_EQ(quote_input(whole + "y"), "\"" + whole + "...\"");
  EXPECT_EQ(quote_input(std::string(300, 'x')).size(), 200u + 2 + 3);
  // An escaped byte counts once against the bound, whatever it becomes.
  auto controls = std::string(max_quoted_bytes + 5, '\n');
  auto quoted = quote_input(controls);
  EXPECT_EQ(quoted.size(), 1 + 4 * max_quoted_bytes + 3 + 1);
}

TEST(quote_input, cuts_at_a_bound_the_caller_gives) {
  auto path = std::string(108, 'a');
  EXPECT_EQ(quote_input(path, 60), "\"" + std::string(60, 'a') + "...\"");
  EXPECT_EQ(quote_input(std::string(60, 'a'), 60), "\"" + std::string(60, 'a') + "\"");
  EXPECT_EQ(quote_input("a\nb", 2), "\"a\\x0a...\"");
  EXPECT_EQ(quote_input("ab", 0), "\"...\"");
}

TEST(rfc3339, writes_utc_to_the_second_rounded_down) {
  using std::chrono::system_clock;
  auto t = system_clock::time_point{std::chrono::seconds{1796061600}};
  EXPECT_EQ(berth::rfc3339(t), "2026-11-30T18:00:00Z");
  EXPECT_EQ(berth::rfc3339(t + std::chrono::milliseconds{999}), "2026-11-30T18:00:00Z");
  EXPECT_EQ(berth::rfc3339(system_clock::time_point{}), "1970-01-01T00:00:00Z");
}
