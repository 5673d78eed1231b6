#pragma once

// berth-bench csi: CreateVolume+DeleteVolume, then NodePublish+NodeUnpublish pairs
// against berthd's CSI socket (see csi_mode.cpp).

#include <string>

namespace berth::bench {

/// Options of the csi mode.
struct csi_options {
  std::string endpoint;            ///< "unix:///PATH" (a bare path is taken as unix://)
  std::string node_endpoint;       ///< where the Node calls go (the parser sets it to endpoint)
  long concurrency = 16;
  double seconds = 10;             ///< per phase
  long pid = 0;                    ///< berthd's pid, for its RSS (0: none)
  std::string prefix = "bench";    ///< volume names start with it
  std::string backend;             ///< StorageClass parameter "backend" ("" = berth's default)
  std::string work_dir = "/tmp";   ///< staging dirs and targets go in a fresh dir below it
  /// Every client publishes one shared volume (each to its own targets), instead of its own.
  bool one_volume = false;
};

int run_csi(const csi_options& opt);

} // namespace berth::bench
