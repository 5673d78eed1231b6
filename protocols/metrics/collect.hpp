#pragma once

// berthd's metric families, built from the telemetry everything counts into: the one
// place their names, types, labels and HELP texts are written. A
// scrape reads atomics only: it never asks an actor and never waits for the hot path.

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/build_info.hpp"
#include "core/telemetry/metric_families.hpp"
#include "core/telemetry/telemetry.hpp"
#include "protocols/metrics/process_stats.hpp"

namespace berth::metrics {

/// Every family of `t`, plus berth_build_info from `build` and the process_* families
/// from `proc` (none when null). Operation and backend-call series appear only once
/// counted (count > 0); the other tables list every label value, zeros included.
std::vector<family> collect(const telemetry& t, const process_stats* proc,
                            const build_info& build);

/// One exposition page of this process: collect() with /proc/self and this build,
/// rendered (exposition.hpp). Without /proc the process_* families are left out.
caf::expected<std::string> scrape(const telemetry& t);

} // namespace berth::metrics
