#include "protocols/csi/snapshot_metadata_service.hpp"

#include <chrono>
#include <string_view>

#include "core/snapshot_pair.hpp"
#include "core/text.hpp"
#include "protocols/csi/counted_reactor.hpp"
#include "protocols/csi/csi_codec.hpp"
#include "protocols/csi/refusal_order.hpp"
#include "protocols/csi/status.hpp"

namespace berth::csi {

namespace {

/// Runs `call` and counts its outcome in telemetry::operations, as counted_reactor does
/// for the unary RPCs.
template <class Call>
grpc::Status counted(const std::shared_ptr<telemetry>& stats, std::string_view rpc, Call call) {
  auto arrived = std::chrono::steady_clock::now();
  auto st = call();
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - arrived;
  if (stats) {
    stats->operations.record("csi", rpc, code_of_status(st.error_code()), took.count());
  }
  return st;
}

/// OUT_OF_RANGE for a starting offset before the start or past the end of `capacity`.
grpc::Status check_offset(int64_t offset, uint64_t capacity) {
  if (offset < 0 || static_cast<uint64_t>(offset) > capacity) {
    return {grpc::StatusCode::OUT_OF_RANGE,
            "starting_offset " + std::to_string(offset) + " lies outside the snapshot's "
              + std::to_string(capacity) + " bytes"};
  }
  return grpc::Status::OK;
}

/// The ranges per message: max_results, or the default for 0; never more than the bound.
caf::expected<size_t> results_of(int32_t max_results) {
  if (max_results < 0) {
    return make_error(ec::invalid_argument,
                      "max_results " + std::to_string(max_results) + " is negative");
  }
  if (max_results == 0) {
    return static_cast<size_t>(default_metadata_results);
  }
  return static_cast<size_t>(std::min(max_results, max_metadata_results));
}

/// Streams the pages `next(from, max)` gives, one message each, from `from` until the
/// last; at least one message, which carries the capacity even when no range does.
template <class Response, class Next>
grpc::Status stream_pages(grpc::ServerContext* ctx, grpc::ServerWriter<Response>* writer,
                          uint64_t capacity, uint64_t from, size_t max, Next next) {
  bool sent = false;
  for (;;) {
    if (ctx->IsCancelled()) {
      return {grpc::StatusCode::CANCELLED, "the client cancelled the stream"};
    }
    auto page = next(from, max);
    if (!page) {
      return to_status(page.error());
    }
    if (!page->ranges.empty() || !sent) {
      Response msg;
      // Runs of one length would be FIXED_LENGTH only by chance: berth merges them.
      msg.set_block_metadata_type(v1::VARIABLE_LENGTH);
      msg.set_volume_capacity_bytes(static_cast<int64_t>(capacity));
      msg.mutable_block_metadata()->Reserve(static_cast<int>(page->ranges.size()));
      for (const auto& r : page->ranges) {
        auto* m = msg.add_block_metadata();
        m->set_byte_offset(static_cast<int64_t>(r.offset));
        m->set_size_bytes(static_cast<int64_t>(r.length));
      }
      if (!writer->Write(msg)) {
        return {grpc::StatusCode::CANCELLED, "the stream broke: the client went away"};
      }
      sent = true;
    }
    if (page->done) {
      return grpc::Status::OK;
    }
    from = page->next;
  }
}

} // namespace

snapshot_metadata_service::snapshot_metadata_service(const csi_config& cfg)
    : backends_(cfg.backends), directory_(cfg.directory), stats_(cfg.stats) {}

grpc::Status snapshot_metadata_service::open(const char* field, const std::string& id,
                                             record_directory::entry& rec,
                                             std::optional<image_map>& image) const {
  if (id.empty()) {
    return invalid_argument(std::string{field} + " is required");
  }
  if (may_exist(id)) {
    rec = directory_->find(id);
  }
  if (!rec || owner_of(*rec) != record_owner::csi || rec->kind != record_kind::snapshot) {
    return unknown_volume(id, "snapshot");
  }
  auto b = backends_.find(rec->backend);
  if (b == backends_.end()) {
    return {grpc::StatusCode::FAILED_PRECONDITION,
            "snapshot " + quote_input(id) + " is of backend " + quote_input(rec->backend)
              + ", which this berthd does not configure"};
  }
  auto opened = b->second->open_snapshot_image(*rec);
  if (!opened) {
    return to_status(opened.error());
  }
  image.emplace(std::move(*opened));
  return grpc::Status::OK;
}

grpc::Status snapshot_metadata_service::GetMetadataAllocated(
  grpc::ServerContext* ctx, const v1::GetMetadataAllocatedRequest* req,
  grpc::ServerWriter<v1::GetMetadataAllocatedResponse>* writer) {
  return counted(stats_, "GetMetadataAllocated", [&] {
    record_directory::entry rec;
    std::optional<image_map> image;
    if (auto st = open("snapshot_id", req->snapshot_id(), rec, image); !st.ok()) {
      return st;
    }
    auto max = results_of(req->max_results());
    if (!max) {
      return to_status(max.error());
    }
    if (auto st = check_offset(req->starting_offset(), image->size()); !st.ok()) {
      return st;
    }
    const auto& img = *image;
    return stream_pages(ctx, writer, img.size(), static_cast<uint64_t>(req->starting_offset()),
                        *max, [&](uint64_t from, size_t n) { return img.allocated(from, n); });
  });
}

grpc::Status snapshot_metadata_service::GetMetadataDelta(
  grpc::ServerContext* ctx, const v1::GetMetadataDeltaRequest* req,
  grpc::ServerWriter<v1::GetMetadataDeltaResponse>* writer) {
  return counted(stats_, "GetMetadataDelta", [&] {
    record_directory::entry base_rec;
    record_directory::entry target_rec;
    std::optional<image_map> base;
    std::optional<image_map> target;
    if (auto st = open("base_snapshot_id", req->base_snapshot_id(), base_rec, base); !st.ok()) {
      return st;
    }
    if (auto st = open("target_snapshot_id", req->target_snapshot_id(), target_rec, target);
        !st.ok()) {
      return st;
    }
    if (auto refused =
          check_delta_pair(*base_rec, *target_rec, "base_snapshot_id", "target_snapshot_id")) {
      return to_status(refused);
    }
    auto max = results_of(req->max_results());
    if (!max) {
      return to_status(max.error());
    }
    if (auto st = check_offset(req->starting_offset(), target->size()); !st.ok()) {
      return st;
    }
    const auto& from = *base;
    const auto& to = *target;
    return stream_pages(ctx, writer, to.size(), static_cast<uint64_t>(req->starting_offset()), *max,
                        [&](uint64_t at, size_t n) { return changed_ranges(from, to, at, n); });
  });
}

} // namespace berth::csi
