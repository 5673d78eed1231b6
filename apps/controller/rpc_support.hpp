#pragma once

// What the controller's RPCs share: the deadline each waits to, the token that tells one
// deletion from another, and the answers for a node's failure or lateness.

#include <cstdint>
#include <string>

#include <grpcpp/grpcpp.h>

#include "apps/controller/object_calls.hpp"

namespace berth::controller {

/// The time an RPC waits to: the client's deadline, at most two minutes away, less a
/// margin so the answer reaches the client before it gives up.
clock_type::time_point deadline_of(const grpc::ServerContext* ctx);

/// A token no other deletion has: 128 random bits, in hex.
std::string new_request_token();

/// The failure a node reported: `reason` (berth's error code name) and `message`.
grpc::Status node_failure(const std::string& node, const std::string& reason,
                          const std::string& message);

/// A wait for `node` that ran out: the node goes on, and a retry waits again. `what` says
/// what it has not done, e.g. "created volume \"v\"".
grpc::Status node_late(const std::string& node, const std::string& what);

/// A byte count as a CSI int64, saturated.
int64_t clamp_bytes(uint64_t bytes);

} // namespace berth::controller
