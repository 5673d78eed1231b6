#pragma once

// Encoding of journal records and snapshots (no I/O here).

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "persistence/store.hpp"

namespace berth::detail {

/// Appends one framed record ([len][crc32][json]) for `entry` to `out`.
void encode_entry(const journal_entry& entry, std::string& out);

/// Decodes framed records from `data`; stops at the first torn or corrupt one.
/// Returns the entries and sets `good_bytes` to the length of the valid prefix.
std::vector<journal_entry> decode_entries(const std::string& data, size_t& good_bytes,
                                          std::string& problem);

/// The snapshot's JSON text.
std::string encode_snapshot(const state_snapshot& state);

/// Parses a snapshot; errors name the problem.
caf::expected<state_snapshot> decode_snapshot(const std::string& json);

/// Parses an older berth's state.json: {"volumes":{NAME:{record without name}}}.
caf::expected<state_snapshot> decode_legacy_state(const std::string& json);

/// Applies one entry to a state.
void apply_entry(state_snapshot& state, const journal_entry& entry);

} // namespace berth::detail
