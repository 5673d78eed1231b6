// The CSI codec: pagination of lists, and the node side (stage and publish decoded,
// statistics encoded).

#include "protocols/csi/csi_codec.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "protocols/csi/detail/codec_common.hpp"
#include "protocols/csi/status.hpp"

namespace berth::csi {

using namespace detail;

// -- pagination -------------------------------------------------------------------

namespace {

/// paginate() over any sorted sequence of names with size() and [].
template <class Names>
grpc::Status paginate_names(const Names& names, int32_t max_entries,
                            const std::string& starting_token, page& out) {
  if (max_entries < 0) {
    return invalid_argument("max_entries " + std::to_string(max_entries) + " is negative");
  }
  out = page{};
  if (!starting_token.empty()) {
    size_t low = 0;
    size_t high = names.size();
    while (low < high) { // the first name not before the token
      size_t mid = low + (high - low) / 2;
      if (names[mid] < starting_token) {
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    if (low == names.size() || names[low] != starting_token) {
      return {grpc::StatusCode::ABORTED,
              "starting_token " + quote_input(starting_token)
                + " names no entry (the list changed): list again from the start"};
    }
    out.begin = low;
  }
  out.end = names.size();
  if (max_entries > 0 && names.size() - out.begin > static_cast<size_t>(max_entries)) {
    out.end = out.begin + static_cast<size_t>(max_entries);
    out.next_token = names[out.end];
  }
  return grpc::Status::OK;
}

} // namespace

grpc::Status paginate(const std::vector<std::string>& names, int32_t max_entries,
                      const std::string& starting_token, page& out) {
  return paginate_names(names, max_entries, starting_token, out);
}

grpc::Status paginate_records(const shared_records& recs, int32_t max_entries,
                              const std::string& starting_token, page& out) {
  // The names are read in place: a whole list of 10,000 copies none.
  struct names_of {
    const shared_records& recs;
    size_t size() const { return recs.size(); }
    const std::string& operator[](size_t i) const { return recs[i]->name; }
  };
  return paginate_names(names_of{recs}, max_entries, starting_token, out);
}

shared_records select_kind(shared_records recs, record_kind kind) {
  recs.erase(
    std::remove_if(recs.begin(), recs.end(), [&](const auto& r) { return r->kind != kind; }),
    recs.end());
  auto by_name = [](const auto& a, const auto& b) { return a->name < b->name; };
  if (!std::is_sorted(recs.begin(), recs.end(), by_name)) { // the directory's come sorted
    std::sort(recs.begin(), recs.end(), by_name);
  }
  return recs;
}

shared_records filter_snapshots(shared_records recs, const std::string& snapshot_id,
                                const std::string& source_volume_id) {
  recs = select_kind(std::move(recs), record_kind::snapshot);
  const content_source source{record_kind::volume, source_volume_id};
  recs.erase(std::remove_if(recs.begin(), recs.end(),
                            [&](const auto& r) {
                              return (!snapshot_id.empty() && r->name != snapshot_id)
                                || (!source_volume_id.empty() && r->source != source);
                            }),
             recs.end());
  return recs;
}

// -- node -------------------------------------------------------------------------

grpc::Status decode_stage(const v1::NodeStageVolumeRequest& req, stage_request& out) {
  if (auto st = require(req.volume_id(), "volume_id"); !st.ok()) {
    return st;
  }
  if (auto st = check_path(req.staging_target_path(), "staging_target_path"); !st.ok()) {
    return st;
  }
  if (!req.has_volume_capability()) {
    return invalid_argument("volume_capability is required");
  }
  const auto& cap = req.volume_capability();
  if (auto st = check_capability(cap, ""); !st.ok()) {
    return st;
  }
  out = stage_request{};
  out.staging_path = req.staging_target_path();
  out.block = cap.has_block();
  if (cap.has_mount()) {
    out.fs_type = cap.mount().fs_type();
    out.flags.assign(cap.mount().mount_flags().begin(), cap.mount().mount_flags().end());
  }
  return grpc::Status::OK;
}

grpc::Status decode_publish(const v1::NodePublishVolumeRequest& req, publish_request& out) {
  if (auto st = require(req.volume_id(), "volume_id"); !st.ok()) {
    return st;
  }
  if (auto st = check_path(req.target_path(), "target_path"); !st.ok()) {
    return st;
  }
  if (auto st = check_path(req.staging_target_path(), "staging_target_path"); !st.ok()) {
    return st;
  }
  if (req.target_path() == req.staging_target_path()) {
    return invalid_argument("target_path " + quote_input(req.target_path())
                            + " is the staging_target_path");
  }
  if (!req.has_volume_capability()) {
    return invalid_argument("volume_capability is required");
  }
  const auto& cap = req.volume_capability();
  if (auto st = check_capability(cap, ""); !st.ok()) {
    return st;
  }
  out = publish_request{};
  out.target = req.target_path();
  out.staging_path = req.staging_target_path();
  out.how.block = cap.has_block();
  out.how.readonly = req.readonly() || cap.access_mode().mode() == mode::SINGLE_NODE_READER_ONLY;
  out.how.single_writer = cap.access_mode().mode() == mode::SINGLE_NODE_SINGLE_WRITER;
  if (cap.has_mount()) {
    out.how.flags.assign(cap.mount().mount_flags().begin(), cap.mount().mount_flags().end());
  }
  return grpc::Status::OK;
}

void encode_stats(const volume_stats& stats, const volume_conditions& seen,
                  v1::NodeGetVolumeStatsResponse* out) {
  auto* bytes = out->add_usage();
  bytes->set_unit(v1::VolumeUsage::BYTES);
  bytes->set_total(to_int64(stats.total_bytes));
  if (!stats.block) {
    bytes->set_available(to_int64(stats.available_bytes));
    bytes->set_used(to_int64(stats.used_bytes));
    auto* inodes = out->add_usage();
    inodes->set_unit(v1::VolumeUsage::INODES);
    inodes->set_total(to_int64(stats.total_inodes));
    inodes->set_available(to_int64(stats.free_inodes));
    inodes->set_used(to_int64(stats.used_inodes));
  }
  if (!stats.abnormal) {
    encode_condition(seen, out->mutable_volume_condition());
    return;
  }
  volume_conditions shown;
  shown.push_back({abnormal_reason::mount_gone, stats.message});
  for (const auto& c : seen) {
    if (c.reason != abnormal_reason::mount_gone && c.reason != abnormal_reason::device_detached) {
      shown.push_back(c);
    }
  }
  encode_condition(shown, out->mutable_volume_condition());
}

void encode_condition(const volume_conditions& c, v1::VolumeCondition* out) {
  out->set_abnormal(!c.empty());
  out->set_message(c.empty() ? "volume is healthy" : describe_conditions(c));
}

} // namespace berth::csi
