#include "apps/controller/rpc_support.hpp"

#include <cstdio>
#include <random>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "protocols/csi/status.hpp"

namespace berth::controller {

namespace {

/// The longest an RPC without a deadline waits for a node.
constexpr std::chrono::seconds longest_wait{120};
/// Kept back from the client's deadline, so the answer reaches it before it gives up.
constexpr std::chrono::milliseconds answer_margin{250};

} // namespace

clock_type::time_point deadline_of(const grpc::ServerContext* ctx) {
  auto left = ctx->deadline() - std::chrono::system_clock::now();
  if (left > longest_wait) {
    left = longest_wait;
  }
  return clock_type::now() + std::chrono::duration_cast<clock_type::duration>(left) - answer_margin;
}

std::string new_request_token() {
  static thread_local std::mt19937_64 bits{std::random_device{}()};
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(bits()),
                static_cast<unsigned long long>(bits()));
  return out;
}

grpc::Status node_failure(const std::string& node, const std::string& reason,
                          const std::string& message) {
  auto code = ec_from_string(reason).value_or(ec::internal);
  return grpc::Status{csi::to_code(code), "node " + quote_input(node) + ": " + message};
}

grpc::Status node_late(const std::string& node, const std::string& what) {
  return grpc::Status{grpc::StatusCode::DEADLINE_EXCEEDED,
                      "node " + quote_input(node) + " has not " + what
                        + " before the deadline; it goes on, and a retry waits again"};
}

int64_t clamp_bytes(uint64_t bytes) {
  return bytes > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(bytes);
}

} // namespace berth::controller
