// Fuzzes the delta reader (backends/block_delta_reader.hpp), which reads what a client sends
// to berthctl import --onto before any of it reaches a volume. Oracles: the input read
// whole and read in two pieces (split where its first byte says) gets the same verdict and
// the same writes; every write lies within the header's size, in ascending order, none
// overlapping the one before; an accepted delta ends with the SHA-256 of all before its last
// 32 bytes, computed here apart from the reader, and its writes add up to its changed bytes.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <openssl/evp.h>

#include "backends/block_delta_reader.hpp"
#include "core/errors.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace berth;

namespace {

struct write_seen {
  uint64_t offset;
  std::string bytes;
};

struct outcome {
  bool accepted = false;
  std::string error;
  std::vector<write_seen> writes; ///< consecutive writes of one range joined
  uint64_t changed = 0;
};

outcome read_in_pieces(const uint8_t* data, size_t size, size_t split) {
  outcome out;
  const delta_reader* self = nullptr;
  delta_reader reader{[&out, &self](uint64_t offset, const char* bytes, size_t n) {
    const auto size_bytes = self->header()->size_bytes;
    fuzz::check(n > 0 && offset <= size_bytes && n <= size_bytes - offset,
                "a write lies within the volume's size", std::to_string(offset));
    if (!out.writes.empty()) {
      auto& last = out.writes.back();
      const uint64_t end = last.offset + last.bytes.size();
      fuzz::check(offset >= end, "writes come in ascending order, none overlapping");
      if (offset == end) {
        last.bytes.append(bytes, n);
        return caf::error{};
      }
    }
    out.writes.push_back({offset, std::string{bytes, n}});
    return caf::error{};
  }};
  self = &reader;
  auto* p = reinterpret_cast<const char*>(data);
  caf::error err = reader.feed(p, split);
  if (!err) {
    err = reader.feed(p + split, size - split);
  }
  if (!err) {
    err = reader.finish();
  }
  out.accepted = !err;
  out.error = err ? describe(err) : "";
  out.changed = reader.changed_bytes();
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto whole = read_in_pieces(data, size, size);
  const size_t split = size == 0 ? 0 : data[0] % size;
  auto pieces = read_in_pieces(data, size, split);
  fuzz::check(whole.accepted == pieces.accepted, "the verdict does not depend on the pieces",
              whole.error + " / " + pieces.error);
  fuzz::check(whole.writes.size() == pieces.writes.size(),
              "the writes do not depend on the pieces");
  for (size_t i = 0; i < whole.writes.size(); ++i) {
    fuzz::check(whole.writes[i].offset == pieces.writes[i].offset
                  && whole.writes[i].bytes == pieces.writes[i].bytes,
                "the writes do not depend on the pieces", std::to_string(i));
  }
  if (!whole.accepted) {
    return 0;
  }
  fuzz::check(size >= 32, "an accepted delta ends with its hash");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data, size - 32, digest, &len, EVP_sha256(), nullptr);
  fuzz::check(len == 32 && std::equal(digest, digest + 32, data + size - 32),
              "an accepted delta ends with the SHA-256 of all before");
  uint64_t written = 0;
  for (const auto& w : whole.writes) {
    written += w.bytes.size();
  }
  fuzz::check(written == whole.changed, "the writes add up to the changed bytes");
  return 0;
}
