#pragma once

// What the local berthd still has staged or published, read from its admin API
// (GET /v1/volumes on the admin socket, the list `berthctl volumes --json` prints).

#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace berth {
class unix_http_client;
} // namespace berth

namespace berth::drain {

/// One volume that still holds the node: staged (staging_path set) or published.
struct busy_volume {
  std::string name;
  bool staged = false;
  size_t targets = 0; ///< published target paths

  /// "pvc-1 (staged, 2 targets)".
  std::string describe() const;
};

/// The volumes staged or published on this node, sorted by name; an empty list
/// means nothing holds it. Fails (ec::unavailable) naming the socket when berthd
/// does not answer, or naming what was unreadable in its answer.
caf::expected<std::vector<busy_volume>> busy_volumes(unix_http_client& admin);

} // namespace berth::drain
