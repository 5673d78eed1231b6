// Fuzzes the journal's frames and the snapshot (persistence/journal_format.hpp), what
// berthd reads at every start. Oracles: decoding stops at a prefix it can read again
// to the same entries; whatever decoded re-encodes to frames that decode to the same
// entries, with no problem reported; the state those entries make survives a
// snapshot's encoding; a snapshot or an older state.json that parses re-encodes to
// an equal state. The input is also framed with a valid checksum, so the mutations
// reach the payload's reader and not only the checksum test.

#include <cstddef>
#include <cstdint>
#include <string>

#include <boost/crc.hpp>

#include "persistence/journal_format.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace berth;
using namespace berth::detail;

namespace {

bool same_entry(const journal_entry& a, const journal_entry& b) {
  return a.erases() == b.erases() && a.name() == b.name() && (a.erases() || *a.record == *b.record);
}

bool same_state(const state_snapshot& a, const state_snapshot& b) {
  return a.volumes == b.volumes && a.boot_id == b.boot_id;
}

void put_u32(std::string& out, uint32_t x) {
  for (int i = 0; i < 4; ++i) {
    out.push_back(static_cast<char>((x >> (8 * i)) & 0xff));
  }
}

/// One frame as the journal writes it: [u32 length][u32 crc32][payload].
std::string frame(const std::string& payload) {
  boost::crc_32_type crc;
  crc.process_bytes(payload.data(), payload.size());
  std::string out;
  put_u32(out, static_cast<uint32_t>(payload.size()));
  put_u32(out, crc.checksum());
  return out + payload;
}

void check_journal(const std::string& data) {
  auto got = decode_entries(data);
  fuzz::check(got.good_bytes <= data.size(), "the valid prefix lies in the input");
  fuzz::check(got.problem.empty() == (got.good_bytes == data.size()),
              "a problem is reported exactly when bytes are left", got.problem);
  // The valid prefix alone decodes to the same entries, without a problem.
  auto prefix = decode_entries(data.substr(0, got.good_bytes));
  fuzz::check(prefix.problem.empty(), "the valid prefix decodes cleanly", prefix.problem);
  fuzz::check(prefix.entries.size() == got.entries.size(), "the valid prefix keeps every entry");
  // Re-encoded, the entries decode to themselves.
  std::string again;
  if (got.has_header) {
    encode_journal_header(got.generation, again);
  }
  state_snapshot state;
  for (const auto& e : got.entries) {
    auto err = encode_entry(e, again);
    fuzz::check(!err, "a decoded entry encodes", e.name());
    apply_entry(state, e);
  }
  auto back = decode_entries(again);
  fuzz::check(back.problem.empty(), "re-encoded entries decode cleanly", back.problem);
  fuzz::check(back.has_header == got.has_header && back.generation == got.generation,
              "the header survives");
  fuzz::check(back.entries.size() == got.entries.size(), "re-encoded entries keep their number");
  for (size_t i = 0; i < got.entries.size(); ++i) {
    fuzz::check(same_entry(back.entries[i], got.entries[i]), "re-encoded entry is equal",
                got.entries[i].name());
    fuzz::check(same_entry(prefix.entries[i], got.entries[i]), "prefix entry is equal",
                got.entries[i].name());
  }
  // The state the entries make survives a compaction's snapshot.
  auto snap = decode_snapshot(encode_snapshot(state, got.generation));
  fuzz::check(static_cast<bool>(snap), "the replayed state's snapshot parses");
  fuzz::check(same_state(snap->state, state) && snap->generation == got.generation,
              "the replayed state survives its snapshot");
}

void check_snapshot(const std::string& text) {
  if (auto snap = decode_snapshot(text)) {
    auto json = encode_snapshot(snap->state, snap->generation);
    auto back = decode_snapshot(json);
    fuzz::check(static_cast<bool>(back), "a re-encoded snapshot parses", json);
    fuzz::check(same_state(back->state, snap->state) && back->generation == snap->generation,
                "a snapshot round-trips", json);
  }
  if (auto legacy = decode_legacy_state(text)) {
    auto json = encode_snapshot(*legacy, 0);
    auto back = decode_snapshot(json);
    fuzz::check(static_cast<bool>(back), "an older state re-encoded as a snapshot parses", json);
    fuzz::check(same_state(back->state, *legacy), "an older state round-trips", json);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  check_journal(bytes);
  // The same bytes as one checksummed payload, after a header and before a torn tail.
  std::string framed;
  encode_journal_header(7, framed);
  framed += frame(bytes);
  check_journal(framed);
  check_journal(framed + framed.substr(0, framed.size() / 2));
  check_snapshot(bytes);
  return 0;
}
