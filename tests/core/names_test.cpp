#include "core/names.hpp"

#include <gtest/gtest.h>

using berth::is_valid_mount_id;
using berth::is_valid_volume_name;

TEST(volume_name, accepts_docker_style_names) {
  EXPECT_TRUE(is_valid_volume_name("v1"));
  EXPECT_TRUE(is_valid_volume_name("my_vol.data-2"));
  EXPECT_TRUE(is_valid_volume_name(std::string(128, 'a')));
}

TEST(volume_name, refuses_names_that_could_leave_the_state_root) {
  EXPECT_FALSE(is_valid_volume_name(""));
  EXPECT_FALSE(is_valid_volume_name("."));
  EXPECT_FALSE(is_valid_volume_name(".."));
  EXPECT_FALSE(is_valid_volume_name("../etc"));
  EXPECT_FALSE(is_valid_volume_name("a/b"));
  EXPECT_FALSE(is_valid_volume_name("-v"));
  EXPECT_FALSE(is_valid_volume_name("_v"));
  EXPECT_FALSE(is_valid_volume_name(std::string(129, 'a')));
  EXPECT_FALSE(is_valid_volume_name(std::string("a\0b", 3)));
  EXPECT_FALSE(is_valid_volume_name("a b"));
}

TEST(mount_id, accepts_ids_and_refuses_empty_or_control_characters) {
  EXPECT_TRUE(is_valid_mount_id("c89a2f"));
  EXPECT_FALSE(is_valid_mount_id(""));
  EXPECT_FALSE(is_valid_mount_id("a\nb"));
  EXPECT_FALSE(is_valid_mount_id(std::string(257, 'x')));
}

// Every layer that refuses a name says the same thing, and quotes what the client sent
// as input (a newline cannot forge a second log line).
TEST(volume_name, a_refusal_names_the_input_quoted_and_the_grammar) {
  EXPECT_EQ(berth::invalid_name_message("volume", "../x"),
            R"(invalid volume name "../x": must match [A-Za-z0-9][A-Za-z0-9_.-]{0,127})");
  auto msg = berth::invalid_name_message("snapshot", "a\nb");
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_EQ(msg.rfind("invalid snapshot name ", 0), 0u) << msg;
}
