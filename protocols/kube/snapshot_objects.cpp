#include "protocols/kube/snapshot_objects.hpp"

#include "core/json_text.hpp"
#include "protocols/kube/detail/object_json.hpp"

namespace berth::kube {

using detail::write_map;
using detail::write_text;

resource_ref berth_snapshots() {
  return {"/apis/berth.csi.dev/v1alpha1", "berthsnapshots", ""};
}

caf::expected<snapshot_object> parse_snapshot_object(const std::string& json) {
  rapidjson::Document doc;
  if (auto err = detail::parse_document(json, "BerthSnapshot", doc)) {
    return err;
  }
  snapshot_object out;
  std::string why;
  const auto& spec = json_object(doc, "spec");
  const auto& status = json_object(doc, "status");
  out.spec.csi_name = json_text(spec, "name");
  out.spec.source_volume = json_text(spec, "sourceVolume");
  out.spec.node = json_text(spec, "nodeName");
  auto& st = out.status;
  st.phase = json_text(status, "phase");
  st.creation_time = json_text(status, "creationTime");
  st.reason = json_text(status, "reason");
  st.message = json_text(status, "message");
  st.delete_request = json_text(status, "deleteRequest");
  st.ready_since = detail::condition_since(status, "Ready");
  if (auto r = json_member(status, "readyToUse"); r && r->IsBool()) {
    st.ready_to_use = r->GetBool();
  }
  if (auto g = json_member(status, "observedGeneration"); g && g->IsInt64()) {
    st.observed_generation = g->GetInt64();
  }
  bool ok = detail::read_meta(doc, out, why)
            && detail::read_map(spec, "parameters", out.spec.parameters, why)
            && detail::read_u64(status, "sizeBytes", st.size_bytes, why);
  if (!ok) {
    return detail::malformed("BerthSnapshot " + out.name, why);
  }
  return out;
}

std::string snapshot_object_json(const std::string& name, const snapshot_object_spec& s) {
  rapidjson::StringBuffer buf;
  detail::json_writer w{buf};
  w.StartObject();
  write_text(w, "apiVersion", "berth.csi.dev/v1alpha1");
  write_text(w, "kind", "BerthSnapshot");
  detail::write_new_meta(w, name, s.node);
  w.Key("spec");
  w.StartObject();
  write_text(w, "name", s.csi_name);
  write_text(w, "sourceVolume", s.source_volume);
  write_text(w, "nodeName", s.node);
  write_map(w, "parameters", s.parameters);
  w.EndObject();
  w.EndObject();
  return detail::text_of(buf);
}

std::string snapshot_status_patch(const snapshot_object_status& st,
                                  const snapshot_object_status& before) {
  rapidjson::StringBuffer buf;
  detail::json_writer w{buf};
  w.StartObject();
  w.Key("status");
  w.StartObject();
  write_text(w, "phase", st.phase);
  w.Key("sizeBytes");
  w.Uint64(st.size_bytes);
  w.Key("readyToUse");
  w.Bool(st.ready_to_use);
  if (!st.creation_time.empty()) {
    write_text(w, "creationTime", st.creation_time);
  }
  w.Key("observedGeneration");
  w.Int64(st.observed_generation);
  write_text(w, "reason", st.reason);
  write_text(w, "message", st.message);
  write_text(w, "deleteRequest", st.delete_request);
  detail::write_conditions(
    w, {{"Ready", st.ready_to_use,
         st.ready_to_use || st.reason.empty() ? st.phase : detail::condition_reason(st.reason),
         st.message, st.observed_generation,
         detail::transition_time(before.ready_to_use, st.ready_to_use, before.ready_since)}});
  w.EndObject();
  w.EndObject();
  return detail::text_of(buf);
}

} // namespace berth::kube
