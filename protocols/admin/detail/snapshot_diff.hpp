#pragma once

// berthctl snapshot diff on berthd's side: the ranges in which one Docker block snapshot
// differs from an older one of the same volume (backends/block_ranges.hpp), answered as
// a chunked JSON object written page by page, so a delta of a large image is never whole
// in memory. It reads the committed records and the snapshot images only, never an actor.
//
//   GET /v1/snapshots/TARGET/diff?base=BASE ->
//     {"base", "target", "volume", "size_bytes", "block_bytes",
//      "ranges": [{"offset", "length"}...], "changed_bytes", "shared_blocks", "read_blocks"}
//
// A refusal comes before the first byte, as an admin API error; a read that fails later
// ends the answer without its last chunk, so the client sees it cut short.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "backends/backend.hpp"
#include "core/record_directory.hpp"
#include "protocols/admin/detail/transfer_runs.hpp"

namespace berth::admin::detail {

/// What a diff reads: the committed records, and the backends that open their images.
struct diff_sources {
  std::shared_ptr<const record_directory> directory;
  std::map<std::string, std::shared_ptr<backend>> backends;
};

/// The value of `key`= in the query of request target `target`, which may hold nothing
/// else; a refusal names the request (`what`) and says what the value is (`meaning`).
caf::expected<std::string> query_value(std::string_view target, std::string_view key,
                                       const std::string& what, const std::string& meaning);

/// A Docker snapshot's record and its image, opened.
struct opened_snapshot {
  record_directory::entry rec;
  std::optional<image_map> image;
};

/// Docker snapshot `name` with its image open; `role` ("base", "target") names it in a
/// refusal: an invalid name, no Docker snapshot of that name (ec::not_found), or one
/// that keeps no image (ec::failed_precondition, a directory snapshot).
caf::expected<opened_snapshot> open_snapshot(const diff_sources& src, const std::string& name,
                                             const char* role);

/// Ranges per chunk of the answer.
inline constexpr size_t diff_page_ranges = 4096;

/// GET /v1/snapshots/TARGET/diff?base=BASE, the request's head in `t.buf`. Returns how
/// it ended.
caf::error run_diff(transfer& t, const std::string& target, const diff_sources& src);

} // namespace berth::admin::detail
