#pragma once

// Which protocol a record belongs to (docs/design.md, "Only what berth owns"): Docker and
// CSI are separate namespaces, and each sees and acts on its own records only. Typed, so
// a misspelt owner does not compile.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace berth {

/// The owner of a record, or of a request. Messages carry it as its underlying byte.
enum class record_owner : uint8_t {
  /// In a record: older state, whose owner owner_of() infers from its fields. In a
  /// request: the admin API, which may act on any record.
  unset,
  docker, ///< Docker Create, ECS import
  csi,    ///< CSI volumes and snapshots
};

/// "docker" or "csi" (the journal's and berthctl's spelling); "" for unset.
std::string to_string(record_owner o);

/// The owner spelt `s` ("docker", "csi", or "" for unset); nullopt for anything else.
std::optional<record_owner> parse_record_owner(std::string_view s);

} // namespace berth
