#pragma once

// The admin API's request bodies, without actors: decode and validate the bodies of
// POST /v1/volumes/NAME/resize and /modify. Every refusal (ec::invalid_argument, HTTP
// 400) names the field and says what to send instead.

#include <cstdint>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

#include "core/volume_record.hpp"

namespace berth::admin {

/// The body of POST /v1/volumes/NAME/resize: {"size_bytes": N}, N a positive integer
/// (bytes; the backend rounds it up). Returns N.
caf::expected<uint64_t> decode_resize(std::string_view body);

/// The body of POST /v1/volumes/NAME/modify: {"parameters": {"KEY": "VALUE", ...}}, at
/// least one and at most limits::max_options parameters, each value a string; keys
/// non-empty and at most limits::max_option_key_bytes, values at most
/// limits::max_option_value_bytes; a key given twice is refused.
caf::expected<option_map> decode_modify(std::string_view body);

/// The body of POST /v1/volumes/NAME/release: {"id": "MOUNT_ID"}, a non-empty string of
/// at most limits::max_mount_id_bytes. Returns the ID.
caf::expected<std::string> decode_release(std::string_view body);

/// The body of POST /v1/volumes/NAME/snapshot: {"name": "SNAPSHOT"}. Returns the name
/// (checked by the caller, as every name is).
caf::expected<std::string> decode_snapshot(std::string_view body);

/// An error's answer: {"error": MESSAGE}.
std::string encode_error(std::string_view message);

/// The answer of POST /v1/volumes/NAME/release: {"volume", "id", "dropped", "checked",
/// "unchecked_why"}.
std::string encode_release(const std::string& volume, const std::string& id, uint32_t dropped,
                           bool checked, const std::string& unchecked_why);

} // namespace berth::admin
