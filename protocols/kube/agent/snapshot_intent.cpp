#include "protocols/kube/agent/snapshot_intent.hpp"

#include "core/errors.hpp"
#include "protocols/kube/agent/volume_intent.hpp"
#include "protocols/kube/berth_objects.hpp"

namespace berth::kube::agent {

volume_spec snapshot_request(const snapshot_object_spec& spec, const std::string& default_backend) {
  volume_spec out;
  out.kind = record_kind::snapshot;
  out.parameters = spec.parameters;
  out.backend = take_backend(out.parameters, default_backend);
  out.source = content_source{record_kind::volume, spec.source_volume};
  out.owner = record_owner::csi;
  return out;
}

snapshot_object_status snapshot_ready(const volume_record& rec, int64_t generation) {
  snapshot_object_status st;
  st.phase = phase_ready;
  st.size_bytes = rec.capacity_bytes;
  st.ready_to_use = true; // the registry answers once the snapshot is cut and durable
  st.creation_time = rec.created_at;
  st.observed_generation = generation;
  return st;
}

snapshot_object_status snapshot_failed(const std::string& phase, const caf::error& err,
                                       int64_t generation) {
  snapshot_object_status st;
  st.phase = phase;
  st.observed_generation = generation;
  st.reason = to_string(berth_code(err).value_or(ec::internal));
  st.message = describe(err);
  return st;
}

} // namespace berth::kube::agent
