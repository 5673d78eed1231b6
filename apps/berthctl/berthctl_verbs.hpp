#pragma once

// The arguments of berthctl's commands that take verbs or pairs (snapshot, unclaimed, and
// the KEY=VALUE of modify and import), apart from the command line's table.

#include <string>
#include <vector>

#include <caf/error.hpp>

#include "apps/berthctl/berthctl_cli.hpp"

namespace berth::cli {

/// `snapshot create VOLUME SNAPSHOT | ls [VOLUME] | rm SNAPSHOT | diff BASE TARGET` into
/// `opts`.
caf::error parse_snapshot_args(const std::vector<std::string>& rest, options& opts);

/// `unclaimed [rm NAME]` into `opts`.
caf::error parse_unclaimed_args(const std::vector<std::string>& rest, options& opts);

/// KEY=VALUE pairs (modify's parameters, import's -o options) into `out`; a pair without
/// its = or key, or a key given twice, is a usage error naming it.
caf::error parse_pairs(const std::vector<std::string>& pairs, option_map& out);

} // namespace berth::cli
