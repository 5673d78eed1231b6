#pragma once

// berth errors -> gRPC status codes, one table for the whole CSI adapter.

#include <string>

#include <caf/error.hpp>
#include <grpcpp/support/status.h>

#include "core/errors.hpp"

namespace berth::csi {

/// The gRPC code the CSI spec expects for a berth error code:
///
/// | ec                  | gRPC code           | why (CSI spec v1.9 error tables)               |
/// |---------------------|---------------------|------------------------------------------------|
/// | invalid_argument    | INVALID_ARGUMENT    | bad field, unsupported capability or source    |
/// | not_found           | NOT_FOUND           | "Volume/Source does not exist"                 |
/// | already_exists      | ALREADY_EXISTS      | same name, incompatible; published differently |
/// | in_use              | FAILED_PRECONDITION | DeleteVolume "Volume in use"                   |
/// | failed_precondition | FAILED_PRECONDITION | publish before stage, unstage while published  |
/// | out_of_range        | OUT_OF_RANGE        | "Unsupported capacity" (Create/Expand), shrink |
/// | unsupported         | FAILED_PRECONDITION | the volume's backend lacks the feature: that   |
/// |                     |                     | depends on the volume, so not INVALID_ARGUMENT;|
/// |                     |                     | the RPC exists, so not UNIMPLEMENTED (kept for |
/// |                     |                     | ControllerPublish/Unpublish/Modify)            |
/// | resource_exhausted  | RESOURCE_EXHAUSTED  | a bound of core/limits.hpp (targets per        |
/// |                     |                     | volume); a canonical code, which the spec says |
/// |                     |                     | every CO must handle, as for "Max volumes      |
/// |                     |                     | attached" in ControllerPublishVolume           |
/// | timeout             | DEADLINE_EXCEEDED   | a backend call did not finish; the CO retries  |
/// | unavailable         | UNAVAILABLE         | berthd stopping or overloaded; the CO retries  |
/// | persist_failure     | INTERNAL            |                                                |
/// | backend_failure     | INTERNAL            |                                                |
/// | internal            | INTERNAL            |                                                |
///
/// CAF's own errors: request_timeout -> DEADLINE_EXCEEDED, a dead receiver ->
/// UNAVAILABLE, anything else -> INTERNAL. RESOURCE_EXHAUSTED (topology) and
/// ABORTED (a bad pagination token) come from the codec, not from the actors.
grpc::StatusCode to_code(ec code);

/// The status for an actor's error; the message is describe(err), which names
/// the bad input.
grpc::Status to_status(const caf::error& err);

/// Shorthands for the codec's own refusals.
grpc::Status invalid_argument(std::string message);
grpc::Status not_found(std::string message);

} // namespace berth::csi
