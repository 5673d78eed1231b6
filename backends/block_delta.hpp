#pragma once

// A block volume's delta since one of its snapshots, as `berthctl export VOL --since SNAP`
// writes it and `berthctl import --onto` will read it (docs/design.md, "Deltas of Docker
// block volumes"). One stream, in this order:
//
//   "berth-delta 1\n"                           the format and its version
//   a JSON object on one line, then "\n"        delta_header: the volume, its base
//                                               snapshot (name, taken at, size), the size
//                                               the volume has now, the block size, the
//                                               copy's consistency
//   per changed range: offset, length (big-endian 64-bit), then its `length` bytes
//   the end: 2^64-1, the number of ranges (big-endian 64-bit), then the SHA-256 of every
//   byte before it
//
// The ranges come in ascending order, none overlapping, each within the volume's size, so
// a reader applies each as it comes; the hash proves the stream whole and unaltered before
// anything it applied is kept.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "backends/block_ranges.hpp"

namespace berth {

inline constexpr const char* delta_magic = "berth-delta 1\n";
/// The offset that marks the end of a delta's ranges.
inline constexpr uint64_t delta_end_marker = ~uint64_t{0};

struct delta_header {
  std::string volume;          ///< the Docker volume whose blocks these are
  std::string base;            ///< the snapshot of it they are a delta since
  std::string base_created_at; ///< RFC 3339: tells a snapshot from one made again later
  uint64_t base_size_bytes = 0;
  uint64_t size_bytes = 0; ///< the volume's size when the delta was taken
  uint64_t block_bytes = delta_block_bytes;
  std::string consistency; ///< as volume_record::consistency of the copy read
};

/// The header's line (JSON, no newline).
std::string encode_delta_header(const delta_header& h);

/// The header read from its line; ec::invalid_argument naming what is wrong.
caf::expected<delta_header> decode_delta_header(const std::string& line);

/// SHA-256 over a stream: the hash at a delta's end.
class delta_hash {
public:
  delta_hash();
  ~delta_hash();
  delta_hash(const delta_hash&) = delete;
  delta_hash& operator=(const delta_hash&) = delete;
  void add(const char* data, size_t size);
  /// The 32 bytes of the hash of all added; adds nothing more after.
  std::string digest();

private:
  struct context;
  std::unique_ptr<context> ctx_;
};

/// Writes a delta to `sink`, which returns false when it can take no more (the writer
/// then stops); hashes what it writes.
class delta_writer {
public:
  using sink_fn = std::function<bool(const char* data, size_t size)>;
  explicit delta_writer(sink_fn sink);
  delta_writer(const delta_writer&) = delete;
  delta_writer& operator=(const delta_writer&) = delete;

  bool header(const delta_header& h);
  /// One range: its position, then `r.length` bytes read from `fd` at `r.offset`. An
  /// error when the read fails; false (no error) when the sink stopped.
  caf::expected<bool> range(const byte_range& r, int fd);
  /// The end record and the hash.
  bool end();

private:
  bool put(const char* data, size_t size);

  sink_fn sink_;
  delta_hash hash_;
  uint64_t ranges_ = 0;
};

} // namespace berth
