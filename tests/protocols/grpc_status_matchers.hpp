#pragma once

// Assertions on the gRPC status a CSI call or decoder answers.

#include <initializer_list>
#include <string>

#include <grpcpp/support/status.h>
#include <gtest/gtest.h>

namespace berth::test {

/// `st` is INVALID_ARGUMENT and its message holds every one of `words`.
inline ::testing::AssertionResult refused(const grpc::Status& st,
                                          std::initializer_list<std::string> words) {
  if (st.error_code() != grpc::StatusCode::INVALID_ARGUMENT) {
    return ::testing::AssertionFailure()
           << "code " << st.error_code() << " (want INVALID_ARGUMENT): " << st.error_message();
  }
  for (const auto& w : words) {
    if (st.error_message().find(w) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks \"" << w << "\": " << st.error_message();
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult refused(const grpc::Status& st, const std::string& word) {
  return refused(st, {word});
}

} // namespace berth::test
