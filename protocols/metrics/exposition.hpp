#pragma once

// The Prometheus text exposition format, version 0.0.4, written from plain values:
//
//   # HELP berth_journal_appends_total Records appended to the journal.
//   # TYPE berth_journal_appends_total counter
//   berth_journal_appends_total 12
//   # HELP berth_journal_fsync_duration_seconds How long one fsync of the journal took.
//   # TYPE berth_journal_fsync_duration_seconds histogram
//   berth_journal_fsync_duration_seconds_bucket{le="0.001"} 9
//   berth_journal_fsync_duration_seconds_bucket{le="+Inf"} 12
//   berth_journal_fsync_duration_seconds_sum 0.0071
//   berth_journal_fsync_duration_seconds_count 12
//
// Families are sorted by name, series by their (name-sorted) label sets, so the same
// families always render to the same bytes, whatever order they were given in.
// Everything is checked before a byte is written: an invalid name, a repeated series or
// family, a malformed histogram is an ec::invalid_argument error that names it.

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/telemetry/metric_families.hpp"
#include "protocols/metrics/text.hpp"

namespace berth::metrics {

/// The Content-Type of a rendered page.
inline constexpr const char* content_type = "text/plain; version=0.0.4; charset=utf-8";

/// Renders `families` as one exposition page, or says which family, series or name is
/// wrong. A family without series still gets its HELP and TYPE lines.
caf::expected<std::string> render(const std::vector<family>& families);

} // namespace berth::metrics
