#pragma once

// A delta (backends/block_delta.hpp) read as it arrives, and checked while it is: the magic,
// the header, ranges in ascending order, none overlapping, each within the volume's size,
// the number of ranges and the SHA-256 at its end. `berthctl import --onto` reads the
// request's body through one to spool it, and the block backend reads the spool through
// another to apply it, so a delta that is not whole and unaltered is refused before any
// byte of it is kept.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <caf/error.hpp>

#include "backends/block_delta.hpp"

namespace berth {

/// ec::failed_precondition when the delta's volume was resized after its base was taken:
/// such a delta is not applied (docs/design.md, "Deltas of Docker block volumes").
caf::error check_delta_size(const delta_header& h);

class delta_reader {
public:
  /// Bytes of a range: `size` bytes at `offset` of the volume's image, in order. A
  /// range's bytes may come in several calls. An error stops the reader.
  using data_fn = std::function<caf::error(uint64_t offset, const char* data, size_t size)>;

  explicit delta_reader(data_fn on_data = {});
  ~delta_reader();
  delta_reader(const delta_reader&) = delete;
  delta_reader& operator=(const delta_reader&) = delete;

  /// Takes the next `size` bytes. An error (ec::invalid_argument saying what is wrong with
  /// the delta, or the data_fn's) ends the reading: later calls return it again.
  caf::error feed(const char* data, size_t size);

  /// After the last byte: an error when the delta ended before its hash.
  caf::error finish() const;

  /// The header, once its line was read.
  const std::optional<delta_header>& header() const { return header_; }
  bool complete() const { return part_ == part::done; }
  uint64_t ranges() const { return ranges_; }
  uint64_t changed_bytes() const { return changed_bytes_; }

private:
  enum class part { magic, header, range_head, range_data, digest, done };

  caf::error take(const char*& data, size_t& size);
  caf::error took_field();
  caf::error bad(const std::string& why);

  data_fn on_data_;
  std::unique_ptr<delta_hash> hash_;
  part part_ = part::magic;
  std::string field_; ///< the bytes of the part being read (all but a range's data)
  std::optional<delta_header> header_;
  uint64_t offset_ = 0;    ///< the range being read: its offset
  uint64_t remaining_ = 0; ///< and the bytes of it still to come
  uint64_t end_ = 0;       ///< where the last range ended
  uint64_t ranges_ = 0;
  uint64_t changed_bytes_ = 0;
  uint64_t read_ = 0;  ///< bytes taken, for errors
  std::string digest_; ///< the hash of every byte before the digest
  caf::error failed_;
};

} // namespace berth
