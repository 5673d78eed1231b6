#include "protocols/kube/agent/volume_intent.hpp"

#include "core/errors.hpp"

namespace berth::kube::agent {

std::string take_backend(option_map& parameters, const std::string& default_backend) {
  auto it = parameters.find("backend");
  if (it == parameters.end()) {
    return default_backend;
  }
  auto backend = it->second;
  parameters.erase(it);
  return backend;
}

volume_spec create_request(const volume_object_spec& spec, const std::string& default_backend) {
  volume_spec out;
  out.kind = record_kind::volume;
  out.parameters = spec.parameters;
  out.backend = take_backend(out.parameters, default_backend);
  out.required_bytes = spec.size_bytes;
  out.limit_bytes = spec.limit_bytes;
  out.mutable_parameters = spec.mutable_parameters;
  if (!spec.source_snapshot.empty()) {
    out.source = content_source{record_kind::snapshot, spec.source_snapshot};
  } else if (!spec.source_volume.empty()) {
    out.source = volume_source(spec.source_volume);
  }
  return out;
}

std::optional<modify_request> change_request(const volume_object_spec& spec, const requested& asked) {
  modify_request out;
  out.owner = record_owner::csi;
  if (spec.size_bytes > asked.bytes) {
    out.required_bytes = spec.size_bytes;
  }
  for (const auto& [key, value] : spec.mutable_parameters) {
    auto it = asked.parameters.find(key);
    if (it == asked.parameters.end() || it->second != value) {
      out.parameters[key] = value;
    }
  }
  if (out.required_bytes == 0 && out.parameters.empty()) {
    return std::nullopt;
  }
  return out;
}

volume_object_status ready_status(const volume_record& rec, int64_t generation) {
  volume_object_status st;
  st.phase = phase_ready;
  st.capacity_bytes = rec.capacity_bytes;
  st.applied_parameters = rec.mutable_parameters;
  st.modifications = rec.modifications;
  st.observed_generation = generation;
  return st;
}

volume_object_status failed_status(const std::string& phase, const caf::error& err,
                                   int64_t generation, const volume_record* rec) {
  volume_object_status st;
  if (rec) {
    st = ready_status(*rec, generation);
  }
  st.phase = phase;
  st.observed_generation = generation;
  auto code = berth_code(err);
  st.reason = to_string(code.value_or(ec::internal));
  st.message = describe(err);
  return st;
}

} // namespace berth::kube::agent
