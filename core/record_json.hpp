#pragma once

#include <string>

#include <caf/expected.hpp>
#include <rapidjson/document.h>
#include <rapidjson/writer.h>
#include <rapidjson/stringbuffer.h>

#include "core/volume_record.hpp"

namespace berth {

/// Writes `rec` as one JSON object (the journal's and the admin API's shape):
/// {"name","backend","options":{},"created_at","mounts":{ID:N},"mounted","mountpoint"}
void write_record(rapidjson::Writer<rapidjson::StringBuffer>& w, const volume_record& rec);

/// Serializes `rec` to a JSON string.
std::string record_to_json(const volume_record& rec);

/// Reads a record written by write_record. Tolerant of older shapes (DESIGN bug 4):
/// "mounts" may be a map whose values are null or 0 (each becomes 1) or an array
/// of IDs (each becomes 1). Fails with a message naming the bad field.
caf::expected<volume_record> read_record(const rapidjson::Value& v);

/// Parses a JSON string into a record.
caf::expected<volume_record> record_from_json(const std::string& json);

} // namespace berth
