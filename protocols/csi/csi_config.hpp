#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "actors/volume_handles.hpp"
#include "backends/backend.hpp"
#include "backends/node_path.hpp"
#include "core/record_directory.hpp"
#include "core/telemetry/telemetry.hpp"

namespace berth {

/// What berthd's CSI endpoint needs (apps/berthd/daemon.cpp fills it from options).
struct csi_config {
  /// "unix:///var/lib/kubelet/plugins/berth.csi.dev/csi.sock" or a plain absolute path.
  std::string endpoint;
  /// GetPluginInfo name; also the prefix of the topology key.
  std::string driver_name = "berth.csi.dev";
  std::string version = BERTH_VERSION;
  /// NodeGetInfo node_id and the value of the topology segment (the host name).
  std::string node_id;
  /// NodeGetInfo max_volumes_per_node; 0 = no limit.
  int64_t max_volumes_per_node = 0;
  /// Staging and target paths must lie below it (backends/node_path.hpp).
  std::string kubelet_dir = default_kubelet_dir;
  /// The backend of a volume whose StorageClass has no `backend` parameter.
  std::string default_backend = "block";
  /// Backends by name; GetCapacity asks them directly (a statvfs).
  std::map<std::string, std::shared_ptr<backend>> backends;
  /// False in the cluster mode (`berthd --kubernetes`): `berthd controller` serves the
  /// Controller service, and Identity does not advertise it.
  bool serve_controller = true;
  /// Advertise the capabilities CSI 1.10 to 1.12 added (GET_SNAPSHOT,
  /// SNAPSHOT_METADATA_SERVICE); false for a suite that refuses them (csi-sanity v5.3.1,
  /// docs/testing.md, "CSI conformance: csi-sanity"). Their RPCs answer either way.
  bool advertise_since_1_10 = true;
  /// The volume actors by name (the registry's): NodePublishVolume and
  /// NodeUnpublishVolume go straight to a volume found here (docs/design.md, "Three
  /// hops"). Null: everything goes through the registry.
  std::shared_ptr<const volume_handles> handles;
  /// The committed records of every volume (the registry's directory): ListVolumes reads
  /// them on its gRPC thread. Null: it asks the registry.
  std::shared_ptr<const record_directory> directory;
  /// Where every RPC is counted (telemetry::operations, protocol "csi"). Null: a
  /// private one (tests that do not look).
  std::shared_ptr<telemetry> stats;
};

} // namespace berth
