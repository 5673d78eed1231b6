#pragma once

// The CSI SnapshotMetadata service (CSI 1.12, changed block tracking; docs/design.md,
// "Changed block tracking"): the allocated ranges of a block snapshot's image, and the
// ranges in which two snapshots of one volume differ, streamed in pages
// (backends/block_ranges.hpp). On gRPC's synchronous API: a stream reads image files on
// a thread of gRPC's, and a slow reader holds back only its own stream (Write waits),
// never an actor or a callback thread. It reads the committed records and the images
// only: a snapshot never changes, and one deleted meanwhile is still read whole.

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "backends/backend.hpp"
#include "core/record_directory.hpp"
#include "core/telemetry/telemetry.hpp"
#include "protocols/csi/csi_config.hpp"

#include "csi.grpc.pb.h"

namespace berth::csi {

namespace v1 = ::csi::v1;

/// Ranges per message when the request's max_results is 0, and the most sent in one.
inline constexpr int32_t default_metadata_results = 256;
inline constexpr int32_t max_metadata_results = 65536;

class snapshot_metadata_service final : public v1::SnapshotMetadata::Service {
public:
  /// Needs cfg.directory (the committed records).
  explicit snapshot_metadata_service(const csi_config& cfg);

  grpc::Status GetMetadataAllocated(
    grpc::ServerContext* ctx, const v1::GetMetadataAllocatedRequest* req,
    grpc::ServerWriter<v1::GetMetadataAllocatedResponse>* writer) override;
  grpc::Status GetMetadataDelta(grpc::ServerContext* ctx, const v1::GetMetadataDeltaRequest* req,
                                grpc::ServerWriter<v1::GetMetadataDeltaResponse>* writer) override;

private:
  /// The CSI snapshot `id`, named in the request's `field`, with its image open; or the
  /// status that refuses it (INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION for a
  /// backend that keeps no block images).
  grpc::Status open(const char* field, const std::string& id, record_directory::entry& rec,
                    std::optional<image_map>& image) const;

  std::map<std::string, std::shared_ptr<backend>> backends_;
  std::shared_ptr<const record_directory> directory_;
  std::shared_ptr<telemetry> stats_;
};

} // namespace berth::csi
