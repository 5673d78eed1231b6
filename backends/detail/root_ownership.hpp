#pragma once

// The owner and mode a plain directory volume's root gets at create: Docker's local
// driver has no way to set them (only tmpfs takes o=uid=,gid=,mode=), so an image that
// runs as a user other than root cannot write to a new volume. Podman's volume create
// has --uid and --gid for the same reason.

#include <cstdint>
#include <optional>
#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "core/volume_record.hpp"

namespace berth::detail {

struct root_ownership {
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  std::optional<uint32_t> mode; ///< permission bits, at most 07777
};

/// The options `uid`, `gid` and `mode` (decimal ids, an octal mode such as 0750).
/// Each error names the volume, the option and the value.
caf::expected<root_ownership> parse_root_ownership(const std::string& volume, const option_map& options);

/// True when `options` name any of uid, gid, mode.
bool names_root_ownership(const option_map& options);

/// Sets the owner, then the mode, of the directory `dir` (never through a symlink).
caf::error apply_root_ownership(const std::string& volume, const std::string& dir,
                                const root_ownership& root);

} // namespace berth::detail
