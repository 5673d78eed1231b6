#include "core/volume_record.hpp"

#include "core/text.hpp"

namespace berth {

uint64_t total_mounts(const volume_record& rec) {
  uint64_t sum = 0;
  for (const auto& [id, count] : rec.mounts) {
    sum += count;
  }
  return sum;
}

bool same_access(const publication& a, const publication& b) {
  return a.readonly == b.readonly && a.block == b.block && a.flags == b.flags
    && a.single_writer == b.single_writer;
}

record_owner owner_of(const volume_record& rec) {
  if (rec.owner != record_owner::unset) {
    return rec.owner;
  }
  bool csi_trace = rec.kind != record_kind::volume || rec.backend != "local"
                   || rec.capacity_bytes != 0 || !rec.source.empty()
                   || !rec.staging_path.empty() || !rec.device.empty() || !rec.published.empty();
  return csi_trace ? record_owner::csi : record_owner::docker;
}

bool in_csi_use(const volume_record& rec) {
  return !rec.staging_path.empty() || !rec.published.empty();
}

std::string now_rfc3339() {
  return rfc3339(std::chrono::system_clock::now());
}

shared_records share(std::vector<volume_record> recs) {
  shared_records out;
  out.reserve(recs.size());
  for (auto& rec : recs) {
    out.push_back(std::make_shared<const volume_record>(std::move(rec)));
  }
  return out;
}

std::vector<volume_record> copies(const shared_records& recs) {
  std::vector<volume_record> out;
  out.reserve(recs.size());
  for (const auto& rec : recs) {
    out.push_back(*rec);
  }
  return out;
}

} // namespace berth
