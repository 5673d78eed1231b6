#pragma once

// berthctl import --onto VOL on berthd's side: a delta (backends/block_delta.hpp) read from
// the request's body, checked as it arrives (its base, its order, its hash) and spooled
// under STATE/imports/ID, then applied by VOL's actor in one transition: VOL must be an
// unused Docker block volume holding exactly the bytes of the delta's base snapshot. A
// refusal, a failure or a crash leaves VOL as it was.
//
//   POST /v1/volumes/VOL/delta, chunked application/octet-stream ->
//     200 {"volume", "delta_of", "base", "ranges", "changed_bytes"}

#include <string>

#include "protocols/admin/detail/snapshot_diff.hpp"
#include "protocols/admin/detail/transfer_runs.hpp"

namespace berth::admin::detail {

/// POST /v1/volumes/NAME/delta, the request's head (and the body's start) in `t.buf`;
/// spools under `imports_dir`. Returns how it ended.
caf::error run_delta_import(transfer& t, const std::string& name, const std::string& imports_dir,
                            const diff_sources& src);

} // namespace berth::admin::detail
