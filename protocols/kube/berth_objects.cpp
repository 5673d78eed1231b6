#include "protocols/kube/berth_objects.hpp"

#include <cctype>

#include <openssl/sha.h>

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "protocols/kube/detail/object_json.hpp"

namespace berth::kube {

namespace {

using detail::json_writer;
using detail::malformed;
using detail::read_map;
using detail::read_strings;
using detail::read_u64;
using detail::text_of;
using detail::write_map;
using detail::write_strings;
using detail::write_text;
using writer = json_writer;

std::string sha256_hex(const std::string& in, size_t digits) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(in.data()), in.size(), digest);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : digest) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out.substr(0, digits);
}

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/// A DNS subdomain (RFC 1123) of at most `max` bytes: lowercase letters, digits, '-' and
/// '.', starting and ending with a letter or digit.
bool is_dns_subdomain(const std::string& s, size_t max) {
  if (s.empty() || s.size() > max || !is_lower_alnum(s.front()) || !is_lower_alnum(s.back())) {
    return false;
  }
  for (char c : s) {
    if (!is_lower_alnum(c) && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

/// A label value: at most 63 bytes of letters, digits, '-', '_' and '.', starting and
/// ending with a letter or digit.
bool is_label_value(const std::string& s) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) {
    return false;
  }
  for (char c : s) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

/// A merge patch setting each of `annotations` on an object.
std::string annotations_patch(const std::map<std::string, std::string>& annotations) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  write_map(w, "annotations", annotations);
  w.EndObject();
  w.EndObject();
  return text_of(buf);
}

} // namespace

resource_ref berth_volumes() {
  return {"/apis/berth.csi.dev/v1alpha1", "berthvolumes", ""};
}

resource_ref nodes() {
  return {"/api/v1", "nodes", ""};
}

resource_ref events(const std::string& ns) {
  return {"/api/v1", "events", ns};
}

caf::expected<volume_object> parse_volume_object(const std::string& json) {
  rapidjson::Document doc;
  if (auto err = detail::parse_document(json, "BerthVolume", doc)) {
    return err;
  }
  volume_object out;
  std::string why;
  if (!detail::read_meta(doc, out, why)) {
    return malformed("BerthVolume " + out.name, why);
  }
  const auto& spec = json_object(doc, "spec");
  const auto& source = json_object(spec, "source");
  const auto& cap = json_object(spec, "capability");
  const auto& status = json_object(doc, "status");
  auto& s = out.spec;
  s.csi_name = json_text(spec, "name");
  s.node = json_text(spec, "nodeName");
  s.source_volume = json_text(source, "volume");
  s.source_snapshot = json_text(source, "snapshot");
  s.access_type = json_text(cap, "accessType");
  s.fs_type = json_text(cap, "fsType");
  s.access_mode = json_text(cap, "accessMode");
  auto& st = out.status;
  st.phase = json_text(status, "phase");
  st.reason = json_text(status, "reason");
  st.message = json_text(status, "message");
  st.delete_request = json_text(status, "deleteRequest");
  st.ready_since = detail::condition_since(status, "Ready");
  st.applied_since = detail::condition_since(status, "Applied");
  if (auto g = json_member(status, "observedGeneration"); g && g->IsInt64()) {
    st.observed_generation = g->GetInt64();
  }
  bool ok = read_u64(spec, "sizeBytes", s.size_bytes, why)
            && read_u64(spec, "limitBytes", s.limit_bytes, why)
            && read_map(spec, "parameters", s.parameters, why)
            && read_map(spec, "mutableParameters", s.mutable_parameters, why)
            && read_strings(cap, "mountFlags", s.mount_flags, why)
            && read_u64(status, "capacityBytes", st.capacity_bytes, why)
            && read_u64(status, "modifications", st.modifications, why)
            && read_map(status, "appliedParameters", st.applied_parameters, why);
  if (!ok) {
    return malformed("BerthVolume " + out.name, why);
  }
  return out;
}

std::string volume_object_json(const std::string& name, const volume_object_spec& s) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  write_text(w, "apiVersion", "berth.csi.dev/v1alpha1");
  write_text(w, "kind", "BerthVolume");
  detail::write_new_meta(w, name, s.node);
  w.Key("spec");
  w.StartObject();
  write_text(w, "name", s.csi_name);
  write_text(w, "nodeName", s.node);
  w.Key("sizeBytes");
  w.Uint64(s.size_bytes);
  if (s.limit_bytes != 0) {
    w.Key("limitBytes");
    w.Uint64(s.limit_bytes);
  }
  write_map(w, "parameters", s.parameters);
  write_map(w, "mutableParameters", s.mutable_parameters);
  if (!s.source_volume.empty() || !s.source_snapshot.empty()) {
    w.Key("source");
    w.StartObject();
    if (!s.source_volume.empty()) {
      write_text(w, "volume", s.source_volume);
    }
    if (!s.source_snapshot.empty()) {
      write_text(w, "snapshot", s.source_snapshot);
    }
    w.EndObject();
  }
  w.Key("capability");
  w.StartObject();
  write_text(w, "accessType", s.access_type);
  if (!s.fs_type.empty()) {
    write_text(w, "fsType", s.fs_type);
  }
  write_strings(w, "mountFlags", s.mount_flags);
  if (!s.access_mode.empty()) {
    write_text(w, "accessMode", s.access_mode);
  }
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return text_of(buf);
}

std::string status_patch(const volume_object_status& st, const volume_object_status& before) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  w.Key("status");
  w.StartObject();
  write_text(w, "phase", st.phase);
  w.Key("capacityBytes");
  w.Uint64(st.capacity_bytes);
  // A merge patch merges maps key by key; that is enough, since a modification sets
  // mutable parameters and never unsets one.
  w.Key("appliedParameters");
  w.StartObject();
  for (const auto& [k, v] : st.applied_parameters) {
    write_text(w, k.c_str(), v);
  }
  w.EndObject();
  w.Key("modifications");
  w.Uint64(st.modifications);
  w.Key("observedGeneration");
  w.Int64(st.observed_generation);
  write_text(w, "reason", st.reason);
  write_text(w, "message", st.message);
  write_text(w, "deleteRequest", st.delete_request);
  // Ready: the volume can be used (a change that failed leaves it so). Applied: what the
  // spec of observedGeneration asks was carried out; its failure is a False of its own, so
  // `kubectl get` and `kubectl wait` see it, not only the message.
  bool ready = st.phase == phase_ready;
  bool applied = st.reason.empty();
  auto failure = detail::condition_reason(st.reason);
  detail::write_conditions(
    w, {{"Ready", ready, ready || applied ? st.phase : failure, ready ? "" : st.message,
         st.observed_generation,
         detail::transition_time(before.phase == phase_ready, ready, before.ready_since)},
        {"Applied", applied, applied ? "Applied" : failure, st.message, st.observed_generation,
         detail::transition_time(before.reason.empty(), applied, before.applied_since)}});
  w.EndObject();
  w.EndObject();
  return text_of(buf);
}

std::string spec_patch(const std::string& resource_version, uint64_t size_bytes,
                       const std::map<std::string, std::string>& mutable_parameters,
                       const std::map<std::string, std::string>& before) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  write_text(w, "resourceVersion", resource_version);
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.Key("sizeBytes");
  w.Uint64(size_bytes);
  w.Key("mutableParameters");
  w.StartObject();
  for (const auto& [k, v] : mutable_parameters) {
    write_text(w, k.c_str(), v);
  }
  for (const auto& [k, v] : before) {
    if (mutable_parameters.count(k) == 0) {
      w.Key(k.c_str());
      w.Null();
    }
  }
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return text_of(buf);
}

std::string delete_request_patch(const std::string& token) {
  return annotations_patch({{delete_request_annotation, token}});
}

std::string finalizers_patch(const std::string& resource_version,
                             const std::vector<std::string>& finalizers) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  write_text(w, "resourceVersion", resource_version);
  write_strings(w, "finalizers", finalizers);
  w.EndObject();
  w.EndObject();
  return text_of(buf);
}

std::string object_name_for(const std::string& csi_name) {
  if (is_dns_subdomain(csi_name, 200)) {
    return csi_name;
  }
  std::string prefix;
  for (char c : csi_name) {
    auto lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (prefix.size() == 40) {
      break;
    }
    prefix += is_lower_alnum(lower) ? lower : '-';
  }
  while (!prefix.empty() && prefix.back() == '-') {
    prefix.pop_back();
  }
  prefix.erase(0, prefix.find_first_not_of('-') == std::string::npos ? prefix.size()
                                                                       : prefix.find_first_not_of('-'));
  return "bv-" + (prefix.empty() ? std::string{} : prefix + "-") + sha256_hex(csi_name, 16);
}

std::string node_label_value(const std::string& node) {
  if (is_label_value(node)) {
    return node;
  }
  return "h-" + sha256_hex(node, 40);
}

caf::expected<std::map<std::string, uint64_t>> parse_node_capacity(const std::string& node_json) {
  rapidjson::Document doc;
  doc.Parse(node_json.data(), node_json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return malformed("Node", "not a JSON object");
  }
  std::map<std::string, uint64_t> out;
  const auto& annotations = json_object(json_object(doc, "metadata"), "annotations");
  std::string prefix = capacity_annotation_prefix;
  for (const auto& m : annotations.GetObject()) {
    std::string key = m.name.GetString();
    if (key.compare(0, prefix.size(), prefix) != 0 || !m.value.IsString()) {
      continue;
    }
    std::string text = m.value.GetString();
    if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    out[key.substr(prefix.size())] = std::stoull(text);
  }
  return out;
}

namespace {

std::string metadata_text(const std::string& json, const char* key) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return {};
  }
  return json_text(json_object(doc, "metadata"), key);
}

} // namespace

std::string object_name_of(const std::string& json) {
  return metadata_text(json, "name");
}

std::string resource_version_of(const std::string& json) {
  return metadata_text(json, "resourceVersion");
}

std::string capacity_patch(const std::map<std::string, uint64_t>& bytes_by_backend) {
  std::map<std::string, std::string> annotations;
  for (const auto& [backend, bytes] : bytes_by_backend) {
    annotations[capacity_annotation_prefix + backend] = std::to_string(bytes);
  }
  return annotations_patch(annotations);
}

std::string event_json(const std::string& name, const std::string& kind, const object_meta& object,
                       const std::string& type, const std::string& reason,
                       const std::string& message, const std::string& component,
                       const std::string& now_rfc3339) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  write_text(w, "apiVersion", "v1");
  write_text(w, "kind", "Event");
  w.Key("metadata");
  w.StartObject();
  write_text(w, "name", name);
  write_text(w, "namespace", cluster_events_namespace);
  w.EndObject();
  w.Key("involvedObject");
  w.StartObject();
  write_text(w, "apiVersion", "berth.csi.dev/v1alpha1");
  write_text(w, "kind", kind);
  write_text(w, "name", object.name);
  if (!object.uid.empty()) {
    write_text(w, "uid", object.uid);
  }
  write_text(w, "resourceVersion", object.resource_version);
  w.EndObject();
  write_text(w, "type", type);
  write_text(w, "reason", reason);
  write_text(w, "message", message);
  w.Key("source");
  w.StartObject();
  write_text(w, "component", component);
  w.EndObject();
  write_text(w, "firstTimestamp", now_rfc3339);
  write_text(w, "lastTimestamp", now_rfc3339);
  w.Key("count");
  w.Int(1);
  w.EndObject();
  return text_of(buf);
}

} // namespace berth::kube
