#pragma once

// The fixture of the CSI Node service's conformance tests (node_test.cpp,
// node_stats_test.cpp): a fresh berthd, and what the tests read off the host.

#include <string>

#include <sys/stat.h>

#include "tests/csi/csi_fixture.hpp"

namespace berth::csi_test {

class NodeTest : public csi_fixture {
protected:
  /// The loop device mounted at `path` ("" when none).
  static std::string device_at(const std::string& path) {
    auto m = mount_at(path);
    return m ? m->source : "";
  }

  static bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
  }

  /// The usage entry of `unit` in a stats reply.
  static const v1::VolumeUsage* usage_of(const v1::NodeGetVolumeStatsResponse& resp,
                                         v1::VolumeUsage::Unit unit) {
    for (auto& u : resp.usage()) {
      if (u.unit() == unit) {
        return &u;
      }
    }
    return nullptr;
  }

  /// Create (fsType `fs`), stage, publish; ControllerExpand and NodeExpand while
  /// published; the filesystem seen through the target really grew.
  void expand_while_published(const std::string& fs);
};

} // namespace berth::csi_test
