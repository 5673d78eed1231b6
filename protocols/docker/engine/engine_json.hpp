#pragma once

// The Docker Engine API's JSON shapes that berth reads (RapidJSON), as dockerd 20.10 sends
// them. Unknown fields are ignored, missing optional ones take defaults; a body that is not
// the JSON expected is ec::unavailable naming the call.

#include <string>

#include <caf/expected.hpp>

#include "protocols/docker/engine/engine_api.hpp"

namespace berth::docker_engine {

/// GET /info (instance left unknown).
caf::expected<engine_info> parse_info(const std::string& json);

/// GET /containers/json?all=1 (instance left unknown). Only mounts of Type "volume" are kept.
caf::expected<container_list> parse_containers(const std::string& json);

/// One line of GET /events. Action is read from "Action", else the older "status".
caf::expected<container_event> parse_event(const std::string& json);

/// The "message" of dockerd's error body ({"message": "..."}), "" when there is none.
std::string parse_error_message(const std::string& json);

} // namespace berth::docker_engine
