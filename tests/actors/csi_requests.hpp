#pragma once

// The CSI requests that both the CSI rules' tests (csi_rules_fixture.hpp) and the volume
// actor's (volume_csi_fixture.hpp) make for volume pvc-1, staged at /stage/pvc-1.

#include <string>

#include "core/csi_types.hpp"

namespace berth::test {

/// A publish of pvc-1 from its staging path to `target`.
inline publish_request csi_publish(const std::string& target, bool readonly = false) {
  publish_request req;
  req.target = target;
  req.staging_path = "/stage/pvc-1";
  req.how.readonly = readonly;
  return req;
}

} // namespace berth::test
