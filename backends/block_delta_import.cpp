// block_backend, berthctl import --onto: a delta (block_delta.hpp) applied to a Docker block
// volume that holds exactly the bytes of the delta's base snapshot. The image is copied
// (reflinked where it can be), the delta written into the copy as it is read again from its
// spool, and the copy renamed over the image only once the delta's hash held: a refusal, a
// failure or a crash leaves the image as it was (docs/design.md, "Deltas of Docker block
// volumes").

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "backends/block_backend.hpp"
#include "backends/block_delta_reader.hpp"
#include "backends/detail/block_helpers.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/loop_device.hpp"
#include "core/errors.hpp"
#include "core/fd_io.hpp"
#include "core/text.hpp"
#include "core/unique_fd.hpp"

namespace berth {

namespace {

constexpr size_t read_chunk_bytes = 1 << 20;

/// Feeds the file at `path` to `reader`, up to its header only when `header_only`.
caf::error read_through(const std::string& path, delta_reader& reader, bool header_only,
                        const std::string& what) {
  auto failed = [&](const char* verb) {
    return make_error(ec::backend_failure,
                      what + ": cannot " + verb + " the delta at " + path + ": "
                        + std::strerror(errno));
  };
  unique_fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
  if (!fd) {
    return failed("open");
  }
  std::vector<char> chunk(header_only ? 4096 : read_chunk_bytes);
  while (!(header_only && reader.header())) {
    auto n = ::read(fd.get(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return failed("read");
    }
    if (n == 0) {
      return reader.finish();
    }
    if (auto err = reader.feed(chunk.data(), static_cast<size_t>(n))) {
      return err;
    }
  }
  return {};
}

/// The delta's bytes written into the image at `copy`; the reader checks the hash.
caf::error write_delta(const std::string& delta, const std::string& copy, const std::string& what,
                       uint64_t& ranges, uint64_t& bytes) {
  unique_fd out{::open(copy.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW)};
  if (!out) {
    return make_error(ec::backend_failure,
                      what + ": cannot open the copy " + copy + ": " + std::strerror(errno));
  }
  delta_reader reader{[&](uint64_t offset, const char* data, size_t size) -> caf::error {
    if (!write_all_at(out.get(), data, size, offset)) {
      return make_error(errno == ENOSPC ? ec::out_of_range : ec::backend_failure,
                        what + ": cannot write " + std::to_string(size) + " bytes at "
                          + std::to_string(offset) + " of the copy " + copy + ": "
                          + std::strerror(errno));
    }
    return {};
  }};
  if (auto err = read_through(delta, reader, false, what)) {
    return err;
  }
  ranges = reader.ranges();
  bytes = reader.changed_bytes();
  return {};
}

} // namespace

caf::error block_backend::apply_delta(const volume_record& rec, const volume_record& base,
                                      const std::string& delta) {
  const auto what = block_what(rec) + ": import of a delta";
  // The helpers' bound, for the whole call: its caller gives up at the backend timeout.
  const auto deadline = std::chrono::steady_clock::now() + helper_timeout_;
  auto image = checked_image(rec);
  if (!image) {
    return image.error();
  }
  auto device = find_loop_device(*image);
  if (!device) {
    return device.error();
  }
  if (!device->empty()) {
    return make_error(ec::in_use,
                      what + ": its image is attached to " + *device
                        + "; a delta applies only to a volume nothing uses");
  }
  delta_reader head;
  if (auto err = read_through(delta, head, true, what)) {
    return err;
  }
  const auto& h = *head.header();
  const std::string since =
    "the delta of volume " + quote_input(h.volume) + " since snapshot " + quote_input(h.base);
  if (h.base != base.name || h.base_created_at != base.created_at) {
    return make_error(ec::failed_precondition,
                      what + ": " + since + " (taken at " + h.base_created_at
                        + ") is not since snapshot " + quote_input(base.name) + " (taken at "
                        + base.created_at + ")");
  }
  if (auto resized = check_delta_size(h)) {
    return make_error(ec::failed_precondition, what + ": " + describe(resized));
  }
  auto base_image = open_snapshot_image(base);
  if (!base_image) {
    return base_image.error();
  }
  auto current = image_map::open(*image);
  if (!current) {
    return current.error();
  }
  const auto restore_hint = "; " + since
    + " applies only to a volume that holds that snapshot's bytes: one made with "
      "-o from-snapshot="
    + h.base + " (and no size of its own), not mounted since";
  if (base_image->size() != h.base_size_bytes || current->size() != h.base_size_bytes) {
    return make_error(ec::failed_precondition,
                      what + ": snapshot " + quote_input(h.base) + " was "
                        + std::to_string(h.base_size_bytes) + " bytes when the delta was taken; "
                        + "its image is " + std::to_string(base_image->size())
                        + " bytes and volume " + quote_input(rec.name) + "'s is "
                        + std::to_string(current->size()) + restore_hint);
  }
  auto differs = changed_ranges(*base_image, *current, 0, 1);
  if (!differs) {
    return differs.error();
  }
  if (!differs->ranges.empty()) {
    return make_error(ec::failed_precondition,
                      what + ": volume " + quote_input(rec.name) + " does not hold snapshot "
                        + quote_input(h.base) + "'s bytes (they differ first at byte "
                        + std::to_string(differs->ranges.front().offset) + ")" + restore_hint);
  }
  uint64_t ranges = 0;
  uint64_t bytes = 0;
  auto rewritten = rewrite_block_image(
    *image, [&](const std::string& copy) { return write_delta(delta, copy, what, ranges, bytes); },
    deadline, what);
  if (rewritten) {
    return rewritten;
  }
  spdlog::info("{}: {} applied: {} ranges, {} bytes", what, since, ranges, bytes);
  return {};
}

} // namespace berth
