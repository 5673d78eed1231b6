#pragma once

// The Docker volume plugin protocol's JSON, without actors: decode and
// validate request bodies, encode replies. Every decode error says exactly
// what was wrong with the input.

#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "core/telemetry/volume_health.hpp"
#include "core/volume_record.hpp"

namespace berth::docker {

/// Content-Type of every plugin reply.
inline constexpr const char* content_type = "application/vnd.docker.plugins.v1+json";

/// Body of Remove, Path and Get: {"Name": ...}.
struct name_request {
  std::string name;
};

/// Body of Create: {"Name": ..., "Opts": {key: value} | null}.
struct create_request {
  std::string name;
  option_map options;
};

/// Body of Mount and Unmount: {"Name": ..., "ID": ...}.
struct mount_request {
  std::string name;
  std::string id;
};

/// Decodes a Create body; Opts may be absent or null (no options).
caf::expected<create_request> decode_create(std::string_view body);

/// Decodes a Remove, Path or Get body.
caf::expected<name_request> decode_name(std::string_view body);

/// Decodes a Mount or Unmount body; ID is required.
caf::expected<mount_request> decode_mount(std::string_view body);

/// {"Err":""}
std::string encode_ok();

/// {"Err":"<message>"}; an empty message becomes "unknown error".
std::string encode_error(std::string_view message);

/// {"Mountpoint":"...","Err":""}
std::string encode_mountpoint(std::string_view mountpoint);

/// {"Volume":{"Name","Mountpoint","CreatedAt","Status":{...}},"Err":""};
/// Mountpoint is "" while not mounted. Status says "health": "healthy", or "abnormal" with
/// each of `conditions` as {"reason","message"} (what `docker volume inspect` shows).
std::string encode_get(const volume_record& rec, const volume_conditions& conditions = {});

/// {"Volumes":[{"Name","Mountpoint"}...],"Err":""}
std::string encode_list(const shared_records& recs);

/// {"Capabilities":{"Scope":"local"}}
std::string encode_capabilities();

/// {"Implements":["VolumeDriver"]}
std::string encode_activate();

} // namespace berth::docker
