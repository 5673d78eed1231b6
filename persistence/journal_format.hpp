#pragma once

// Encoding of journal records and snapshots (no I/O here).

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "persistence/store.hpp"

namespace berth::detail {

/// Bytes of a frame's header: [u32 length][u32 crc32].
inline constexpr size_t frame_header_bytes = 8;

/// Appends one framed record ([len][crc32][json]) for `entry` to `out`. A frame larger
/// than limits::max_frame_bytes is refused (ec::out_of_range, naming the volume and the
/// size) and nothing is appended: decoding would reject it, so it could never be read back.
caf::error encode_entry(const journal_entry& entry, std::string& out);

/// Appends the journal's first frame, {"op":"journal","generation":N}: the records after it
/// continue the snapshot of generation N.
void encode_journal_header(uint64_t generation, std::string& out);

/// What decode_entries found in a journal.
struct decoded_journal {
  std::vector<journal_entry> entries; ///< the valid prefix, in order
  size_t good_bytes = 0;              ///< length of the valid prefix
  std::string problem;                ///< why decoding stopped early; empty when it did not
  /// The bad record is not a torn tail: its checksum matched but it cannot be read, its
  /// length field exceeds limits::max_frame_bytes (no writer makes such a frame), or a
  /// valid record follows it. Such bytes were acknowledged once; they are worth keeping.
  bool corrupt_middle = false;
  /// The journal starts with a header frame; `generation` is the snapshot it continues.
  /// A journal without one (older berth) continues generation 0.
  bool has_header = false;
  uint64_t generation = 0;
};

/// Decodes framed records from `data`; stops at the first torn or corrupt one.
decoded_journal decode_entries(const std::string& data);

/// The snapshot's JSON text; `generation` counts compactions (see file_store).
std::string encode_snapshot(const state_snapshot& state, uint64_t generation);
std::string encode_snapshot(const shared_state& state, uint64_t generation);

/// A parsed snapshot and its generation (0 for a version 1 snapshot).
struct decoded_snapshot {
  state_snapshot state;
  uint64_t generation = 0;
};

/// Parses a snapshot (version 1 or 2); errors name the problem.
caf::expected<decoded_snapshot> decode_snapshot(const std::string& json);

/// Parses an older berth's state.json: {"volumes":{NAME:{record without name}}}.
caf::expected<state_snapshot> decode_legacy_state(const std::string& json);

/// Applies one entry to a state (a loaded one: its record is copied).
void apply_entry(state_snapshot& state, const journal_entry& entry);

/// Applies one entry to the persistence actor's state: its record is shared.
void apply_entry(shared_state& state, const journal_entry& entry);

} // namespace berth::detail
