#pragma once

#include <functional>
#include <string>
#include <vector>

#include <caf/expected.hpp>
#include <rapidjson/document.h>
#include <rapidjson/writer.h>
#include <rapidjson/stringbuffer.h>

#include "core/telemetry/volume_health.hpp"
#include "core/volume_record.hpp"

namespace berth {

/// Which fields write_record writes besides the ones every record has.
enum class record_shape {
  /// Only the fields that are set: the journal's shape, so Docker records stay small.
  journal,
  /// Also capacity_bytes, mutable_parameters and modifications when they are 0 or
  /// empty: the admin API's shape, so an operator (and berth-bench) always finds them.
  full,
};

/// Writes `rec` as one JSON object (the journal's and the admin API's shape):
/// {"name","backend","options":{},"created_at","mounts":{ID:N},
/// "mount_origins":{ID:{"dockerd","last_mounted_ms"}} (when any),"mounted","mountpoint"}
/// then the CSI fields (see record_shape). `extra` writes members of the admin API's own
/// (used_bytes) before the object ends.
void write_record(rapidjson::Writer<rapidjson::StringBuffer>& w, const volume_record& rec,
                  record_shape shape = record_shape::journal,
                  const std::function<void(rapidjson::Writer<rapidjson::StringBuffer>&)>& extra
                  = {});

/// Writes "health": "healthy", or "abnormal" and "conditions": [{"reason","message"}...]:
/// a volume's health as Docker's Status and the admin API show it.
void write_health(rapidjson::Writer<rapidjson::StringBuffer>& w, const volume_conditions& c);

/// Serializes `rec` to a JSON string.
std::string record_to_json(const volume_record& rec, record_shape shape = record_shape::journal);

/// Reads a record written by write_record. Tolerant of older shapes (docs/design.md,
/// "Old state files load"): "mounts" may be a map whose values are null or 0 (each
/// becomes 1) or an array of IDs (each becomes 1); "mount_origins" may be absent (no
/// origins), and an origin of an ID that "mounts" does not count is dropped. Fails
/// with a message naming the bad field.
caf::expected<volume_record> read_record(const rapidjson::Value& v);

/// Parses a JSON string into a record.
caf::expected<volume_record> record_from_json(const std::string& json);

/// Parses a JSON array of records (the admin API's volume list); fails naming the
/// first record it cannot read.
caf::expected<std::vector<volume_record>> records_from_json(const std::string& json);

} // namespace berth
