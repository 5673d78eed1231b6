#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/metrics/exposition.hpp"

namespace berth::metrics::test {

/// The message of a render that must fail with ec::invalid_argument ("" and a test
/// failure when it renders).
inline std::string refusal(const std::vector<family>& families) {
  auto out = render(families);
  if (out) {
    ADD_FAILURE() << "rendered although it should not:\n" << *out;
    return "";
  }
  EXPECT_EQ(out.error().category(), caf::atom("berth"));
  EXPECT_EQ(out.error().code(), static_cast<uint8_t>(ec::invalid_argument));
  return describe(out.error());
}

} // namespace berth::metrics::test
