#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "protocols/metrics/exposition.hpp"

using berth::metrics::format_value;

namespace {

constexpr double two_to_53 = 9007199254740992.0;

} // namespace

TEST(format_value, integers_have_no_exponent_and_no_fraction) {
  EXPECT_EQ(format_value(0), "0");
  EXPECT_EQ(format_value(-0.0), "0");
  EXPECT_EQ(format_value(1), "1");
  EXPECT_EQ(format_value(-42), "-42");
  EXPECT_EQ(format_value(1e6), "1000000");
  EXPECT_EQ(format_value(1e15), "1000000000000000");
  EXPECT_EQ(format_value(two_to_53), "9007199254740992");
  EXPECT_EQ(format_value(-two_to_53), "-9007199254740992");
  EXPECT_EQ(format_value(4294967296.0), "4294967296");
}

TEST(format_value, random_integers_up_to_2_to_the_53_print_as_integers) {
  std::mt19937_64 rng{7};
  std::uniform_int_distribution<int64_t> dist{-(int64_t{1} << 53), int64_t{1} << 53};
  for (int i = 0; i < 20000; ++i) {
    auto n = dist(rng);
    ASSERT_EQ(format_value(static_cast<double>(n)), std::to_string(n));
  }
}

TEST(format_value, fractions_use_the_shortest_text) {
  EXPECT_EQ(format_value(0.1), "0.1");
  EXPECT_EQ(format_value(0.53), "0.53");
  EXPECT_EQ(format_value(-1.5), "-1.5");
  EXPECT_EQ(format_value(123456789.125), "123456789.125");
  EXPECT_EQ(format_value(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(format_value(0.1 + 0.2), "0.30000000000000004");
}

TEST(format_value, fractions_from_1e_minus_4_up_are_plain_decimals) {
  EXPECT_EQ(format_value(0.0005), "0.0005");
  EXPECT_EQ(format_value(0.0001), "0.0001");
  EXPECT_EQ(format_value(-0.00025), "-0.00025");
  EXPECT_EQ(format_value(1234567.891), "1234567.891");
  EXPECT_EQ(format_value(4503599627370495.5), "4503599627370495.5");
}

TEST(format_value, beyond_2_to_the_53_and_below_1e_minus_4_use_an_exponent) {
  EXPECT_EQ(format_value(1e16), "1e+16");
  EXPECT_EQ(format_value(9007199254740994.0), "9.007199254740994e+15");
  EXPECT_EQ(format_value(0.00001), "1e-05");
  EXPECT_EQ(format_value(1e300), "1e+300");
  EXPECT_EQ(format_value(1.5e-7), "1.5e-07");
  EXPECT_EQ(format_value(std::numeric_limits<double>::denorm_min()), "5e-324");
  EXPECT_EQ(format_value(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
}

TEST(format_value, special_values_are_spelled_as_prometheus_does) {
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(format_value, every_finite_double_reads_back_as_itself) {
  std::mt19937_64 rng{11};
  int checked = 0;
  while (checked < 100000) {
    auto bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) {
      continue;
    }
    ++checked;
    auto text = format_value(v);
    char* end = nullptr;
    auto back = std::strtod(text.c_str(), &end);
    ASSERT_EQ(*end, '\0') << text;
    ASSERT_EQ(back, v) << text;
  }
}

TEST(format_value, doubles_between_1e_minus_4_and_2_to_the_53_read_back_as_themselves) {
  std::mt19937_64 rng{13};
  std::uniform_real_distribution<double> mantissa{-1, 1};
  std::uniform_int_distribution<int> exponent{-13, 53};
  for (int i = 0; i < 100000; ++i) {
    auto v = std::ldexp(mantissa(rng), exponent(rng));
    if (std::fabs(v) < 1e-4) {
      continue;
    }
    auto text = format_value(v);
    ASSERT_EQ(text.find('e'), std::string::npos) << text;
    char* end = nullptr;
    auto back = std::strtod(text.c_str(), &end);
    ASSERT_EQ(*end, '\0') << text;
    ASSERT_EQ(back, v) << text;
  }
}
