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

/// What decode_entries found in a journal.
struct decoded_journal {
  std::vector<journal_entry> entries; ///< the valid prefix, in order
  size_t good_bytes = 0;              ///< length of the valid prefix
  std::string problem;                ///< why decoding stopped early; empty when it did not
  /// The bad record is not a torn tail: its checksum matched but it cannot be read, or a
  /// valid record follows it. Such bytes were acknowledged once; they are worth keeping.
  bool corrupt_middle = false;
};

/// Decodes framed records from `data`; stops at the first torn or corrupt one.
decoded_journal decode_entries(const std::string& data);

/// The snapshot's JSON text.
std::string encode_snapshot(const state_snapshot& state);

/// Parses a snapshot; errors name the problem.
caf::expected<state_snapshot> decode_snapshot(const std::string& json);

/// Parses an older berth's state.json: {"volumes":{NAME:{record without name}}}.
caf::expected<state_snapshot> decode_legacy_state(const std::string& json);

/// Applies one entry to a state.
void apply_entry(state_snapshot& state, const journal_entry& entry);

/// Applies one entry to a state, moving its record.
void apply_entry(state_snapshot& state, journal_entry&& entry);

} // namespace berth::detail
