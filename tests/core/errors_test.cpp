#include "core/errors.hpp"

#include <caf/sec.hpp>
#include <gtest/gtest.h>

using namespace berth;

TEST(errors, is_matches_berth_codes_only) {
  auto err = make_error(ec::not_found, "no such volume: v1");
  EXPECT_TRUE(is(err, ec::not_found));
  EXPECT_FALSE(is(err, ec::in_use));
  EXPECT_FALSE(is(caf::error{}, ec::not_found));
  // A CAF error with the same number is not berth's not_found.
  auto system = caf::make_error(static_cast<caf::sec>(static_cast<uint8_t>(ec::not_found)));
  ASSERT_EQ(system.code(), static_cast<uint8_t>(ec::not_found));
  EXPECT_FALSE(is(system, ec::not_found));
}

TEST(errors, berth_code_is_empty_for_no_error_and_other_categories) {
  EXPECT_EQ(berth_code(make_error(ec::timeout, "slow")), ec::timeout);
  EXPECT_FALSE(berth_code(caf::error{}));
  EXPECT_FALSE(berth_code(caf::make_error(caf::sec::request_timeout)));
}
