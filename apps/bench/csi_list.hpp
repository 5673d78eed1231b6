#pragma once

// berth-bench csi-list: ListVolumes over many CSI volumes, as external-provisioner and the
// snapshotter call it (see csi_list_mode.cpp).

#include <string>

namespace berth::bench {

/// Options of the csi-list mode.
struct csi_list_options {
  std::string endpoint;          ///< "unix:///PATH" (a bare path is taken as unix://)
  long volumes = 0;              ///< V: volumes made before the lists, deleted after
  long lists = 100;              ///< L: ListVolumes calls timed, one after another
  long concurrency = 16;         ///< clients that create and delete the volumes
  std::string backend = "local"; ///< StorageClass parameter "backend" of the volumes
  std::string prefix = "bench";  ///< volume names start with it
  long pid = 0;                  ///< berthd's pid, for its RSS (0: none)
};

/// Runs the mode; returns the exit code (0, 1 when the setup failed, 2 with errors).
int run_csi_list(const csi_list_options& opt);

} // namespace berth::bench
