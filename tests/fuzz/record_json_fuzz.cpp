// Fuzzes the volume record's JSON reader (core/record_json.hpp), which reads every
// journal record, snapshot and admin answer. Oracle: whatever parses re-encodes, in
// both shapes, to JSON that parses back to an equal record, and that encoding is
// stable (encoding the re-read record gives the same bytes).

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/record_json.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace berth;

namespace {

void round_trip(const volume_record& rec, record_shape shape, const char* shape_name) {
  auto json = record_to_json(rec, shape);
  auto again = record_from_json(json);
  fuzz::check(static_cast<bool>(again), "encoded record parses",
              std::string{shape_name} + ": " + json);
  fuzz::check(*again == rec, "round trip gives an equal record",
              std::string{shape_name} + ": " + json);
  fuzz::check(record_to_json(*again, shape) == json, "encoding is stable",
              std::string{shape_name} + ": " + json);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  if (auto rec = record_from_json(text)) {
    round_trip(*rec, record_shape::journal, "journal");
    round_trip(*rec, record_shape::full, "full");
  }
  if (auto recs = records_from_json(text)) {
    for (const auto& rec : *recs) {
      round_trip(rec, record_shape::journal, "list/journal");
    }
  }
  return 0;
}
