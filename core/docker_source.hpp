#pragma once

// A Docker volume made from another: `-o from-snapshot=SNAP` or `-o clone-of=VOL` on
// `docker volume create` (docs/running.md, "Snapshots and clones of Docker volumes").

#include <string>

#include <caf/expected.hpp>

#include "core/record_kind.hpp"
#include "core/volume_record.hpp"

namespace berth {

inline constexpr const char* docker_from_snapshot_key = "from-snapshot";
inline constexpr const char* docker_clone_of_key = "clone-of";

/// The content source the options of Docker volume `volume` name: a snapshot, a
/// volume, or none (empty). Both keys, a bad name, or the volume itself is
/// ec::invalid_argument naming the option.
caf::expected<content_source> docker_content_source(const std::string& volume,
                                                    const option_map& options);

} // namespace berth
