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
#include <string>

#include "backends/backend.hpp"
#include "core/record_directory.hpp"
#include "protocols/admin/detail/transfer_runs.hpp"

namespace berth::admin::detail {

/// What a diff reads: the committed records, and the backends that open their images.
struct diff_sources {
  std::shared_ptr<const record_directory> directory;
  std::map<std::string, std::shared_ptr<backend>> backends;
};

/// Ranges per chunk of the answer.
inline constexpr size_t diff_page_ranges = 4096;

/// GET /v1/snapshots/TARGET/diff?base=BASE, the request's head in `t.buf`. Returns how
/// it ended.
caf::error run_diff(transfer& t, const std::string& target, const diff_sources& src);

} // namespace berth::admin::detail
