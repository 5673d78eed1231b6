#pragma once

// `berthctl top`: the live view of berthd's operations in a terminal (ANSI escapes, the
// terminal in non-canonical no-echo mode, nothing from ncurses), or one sample of it as
// JSON. What it shows is computed by top_view.hpp.

#include <iosfwd>

#include "apps/berthctl/berthctl_cli.hpp"

namespace berth::cli {

/// Runs `berthctl top`. With opts.json: two samples of GET /v1/operations, opts.interval
/// apart, then the view as JSON on `out`. Otherwise standard input and output must be a
/// terminal: it switches to the alternate screen, redraws every opts.interval, and quits
/// on `q` (exit 0) or SIGINT, SIGTERM, SIGHUP (exit 128 + the signal), restoring the
/// terminal each way. A first sample that fails ends it with the error on `err`; a later
/// one is shown in the view and retried.
int run_top(const options& opts, std::ostream& out, std::ostream& err);

} // namespace berth::cli
