#include "backends/block_delta_reader.hpp"

#include <algorithm>
#include <cstring>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace berth {

namespace {

/// The longest header line read: a few hundred bytes in practice.
constexpr size_t max_header_bytes = 1 << 16;
constexpr size_t digest_bytes = 32;

uint64_t get_u64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    v = (v << 8) | static_cast<unsigned char>(in[i]);
  }
  return v;
}

} // namespace

caf::error check_delta_size(const delta_header& h) {
  if (h.size_bytes == h.base_size_bytes) {
    return {};
  }
  return make_error(ec::failed_precondition,
                    "volume " + quote_input(h.volume) + " was resized from "
                      + std::to_string(h.base_size_bytes) + " to " + std::to_string(h.size_bytes)
                      + " bytes after snapshot " + quote_input(h.base)
                      + " was taken; a delta across a resize is not applied: export and import "
                        "the whole volume instead");
}

delta_reader::delta_reader(data_fn on_data)
    : on_data_(std::move(on_data)), hash_(std::make_unique<delta_hash>()) {}

delta_reader::~delta_reader() = default;

caf::error delta_reader::bad(const std::string& why) {
  return make_error(ec::invalid_argument,
                    "the delta " + why + " (at byte " + std::to_string(read_) + ")");
}

caf::error delta_reader::feed(const char* data, size_t size) {
  while (size > 0 && !failed_) {
    failed_ = take(data, size);
  }
  return failed_;
}

caf::error delta_reader::take(const char*& data, size_t& size) {
  if (part_ == part::done) {
    return bad("goes on after its hash: " + std::to_string(size) + " more bytes");
  }
  if (part_ == part::range_data) {
    auto n = static_cast<size_t>(std::min<uint64_t>(remaining_, size));
    hash_->add(data, n);
    if (on_data_) {
      if (auto err = on_data_(offset_, data, n)) {
        return err;
      }
    }
    offset_ += n;
    remaining_ -= n;
    read_ += n;
    data += n;
    size -= n;
    if (remaining_ == 0) {
      part_ = part::range_head;
    }
    return {};
  }
  // Every other part is a field gathered whole: a fixed size, or the header's line.
  size_t want = 0;
  switch (part_) {
    case part::magic: want = std::strlen(delta_magic); break;
    case part::range_head: want = 16; break;
    case part::digest: want = digest_bytes; break;
    default: want = max_header_bytes; break;
  }
  size_t n = std::min(want - field_.size(), size);
  if (part_ == part::header) {
    const void* nl = std::memchr(data, '\n', n);
    if (nl != nullptr) {
      n = static_cast<size_t>(static_cast<const char*>(nl) - data) + 1;
    } else if (field_.size() + n == want) {
      return bad("header is not one line of at most " + std::to_string(max_header_bytes)
                 + " bytes");
    }
  }
  field_.append(data, n);
  if (part_ != part::digest) {
    hash_->add(data, n);
  }
  read_ += n;
  data += n;
  size -= n;
  if (part_ == part::header ? field_.back() != '\n' : field_.size() < want) {
    return {};
  }
  auto err = took_field();
  field_.clear();
  return err;
}

caf::error delta_reader::took_field() {
  switch (part_) {
    case part::magic:
      if (field_ != delta_magic) {
        return bad("is not one of berth's: it does not begin with \"berth-delta 1\" (a file "
                   "that berthctl export --since wrote does)");
      }
      part_ = part::header;
      return {};
    case part::header: {
      field_.pop_back();
      auto h = decode_delta_header(field_);
      if (!h) {
        return h.error();
      }
      header_ = std::move(*h);
      part_ = part::range_head;
      return {};
    }
    case part::range_head: {
      const uint64_t offset = get_u64(field_.data());
      const uint64_t length = get_u64(field_.data() + 8);
      if (offset == delta_end_marker) {
        if (length != ranges_) {
          return bad("ends saying it holds " + std::to_string(length) + " ranges, but it held "
                     + std::to_string(ranges_));
        }
        digest_ = hash_->digest();
        part_ = part::digest;
        return {};
      }
      const auto where = "range " + std::to_string(offset) + "+" + std::to_string(length);
      if (length == 0) {
        return bad("has an empty " + where);
      }
      if (offset < end_) {
        return bad("has " + where + " before the end of the range before it ("
                   + std::to_string(end_) + "): ranges come in ascending order, none overlapping");
      }
      if (offset > header_->size_bytes || length > header_->size_bytes - offset) {
        return bad("has " + where + ", past the volume's size of "
                   + std::to_string(header_->size_bytes) + " bytes");
      }
      offset_ = offset;
      remaining_ = length;
      end_ = offset + length;
      ++ranges_;
      changed_bytes_ += length;
      part_ = part::range_data;
      return {};
    }
    case part::digest:
      if (field_ != digest_) {
        return bad("does not match its SHA-256: it was altered or damaged since it was written");
      }
      part_ = part::done;
      return {};
    default: return {};
  }
}

caf::error delta_reader::finish() const {
  if (failed_) {
    return failed_;
  }
  if (part_ != part::done) {
    return make_error(ec::invalid_argument,
                      "the delta ends after " + std::to_string(read_)
                        + " bytes, before its end and hash: it was cut short");
  }
  return {};
}

} // namespace berth
