#pragma once

// berthctl export VOL --since SNAP on berthd's side: the blocks of Docker block volume VOL
// that differ from its snapshot SNAP, in the delta format (backends/block_delta.hpp), read
// from a copy of VOL's image made for the export as a snapshot is made (frozen while
// mounted), neither attached nor mounted, and deleted after.
//
//   GET /v1/volumes/VOL/export?since=SNAP -> 200 application/octet-stream, chunked, header
//       Berth-Consistency. A refusal comes before the first byte; a failure later ends the
//       answer without its last chunk, so the client sees it cut short.

#include <string>

#include "protocols/admin/detail/snapshot_diff.hpp"
#include "protocols/admin/detail/transfer_runs.hpp"

namespace berth::admin::detail {

/// GET /v1/volumes/NAME/export?since=SNAP, the request's head in `t.buf`. Returns how it
/// ended.
caf::error run_delta_export(transfer& t, const std::string& name, const diff_sources& src);

} // namespace berth::admin::detail
