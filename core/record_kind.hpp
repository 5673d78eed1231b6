#pragma once

// What a record is (a volume or a snapshot) and what a record was made from.
// Typed, so no code outside the JSON and CSI codecs compares or splits strings.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <caf/meta/type_name.hpp>

namespace berth {

/// The two kinds of record: a volume, or a CSI snapshot of one.
/// Messages carry it as its underlying byte (CAF serializes enums so).
enum class record_kind : uint8_t { volume, snapshot };

/// "volume" or "snapshot": the journal's and the logs' spelling.
std::string to_string(record_kind k);

/// The kind spelt `s` ("volume", "snapshot"); nullopt for anything else.
std::optional<record_kind> parse_record_kind(std::string_view s);

/// What a record was made from: for a volume, the snapshot or volume it was
/// cloned from; for a snapshot, the volume it was taken of. An empty `name`
/// means none (a volume made empty).
struct content_source {
  record_kind kind = record_kind::volume;
  std::string name; ///< "" = no source

  /// True when there is no source.
  bool empty() const {
    return name.empty();
  }

  /// "snapshot:NAME" / "volume:NAME" (the journal's form, and what logs and
  /// errors print); "" when empty.
  std::string describe() const;
};

/// The volume `name` as a source.
inline content_source volume_source(std::string name) {
  return content_source{record_kind::volume, std::move(name)};
}

/// The snapshot `name` as a source.
inline content_source snapshot_source(std::string name) {
  return content_source{record_kind::snapshot, std::move(name)};
}

bool operator==(const content_source& a, const content_source& b);
inline bool operator!=(const content_source& a, const content_source& b) {
  return !(a == b);
}

/// describe(), for CAF's stringification of messages.
inline std::string to_string(const content_source& x) {
  return x.describe();
}

/// Parses describe()'s form: "" is the empty source; "snapshot:NAME" or
/// "volume:NAME" with a non-empty NAME a source; nullopt for anything else.
std::optional<content_source> parse_content_source(std::string_view s);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, content_source& x) {
  return f(caf::meta::type_name("content_source"), x.kind, x.name);
}

} // namespace berth
