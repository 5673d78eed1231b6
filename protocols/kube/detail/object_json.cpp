#include "protocols/kube/detail/object_json.hpp"

#include <cctype>

#include <rapidjson/error/en.h>

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "core/text.hpp"
#include "protocols/kube/berth_objects.hpp"

namespace berth::kube::detail {

caf::error malformed(const std::string& what, const std::string& why) {
  return make_error(ec::unavailable, "kube API sent a malformed " + what + ": " + why);
}

bool read_u64(const json_value& obj, const char* key, uint64_t& out, std::string& why) {
  auto v = json_member(obj, key);
  if (!v || v->IsNull()) {
    return true;
  }
  if (!v->IsUint64()) {
    why = std::string{key} + " is " + json_type_name(*v) + ", not a non-negative integer";
    return false;
  }
  out = v->GetUint64();
  return true;
}

bool read_map(const json_value& obj, const char* key, std::map<std::string, std::string>& out,
              std::string& why) {
  auto v = json_member(obj, key);
  if (!v || v->IsNull()) {
    return true;
  }
  if (!v->IsObject()) {
    why = std::string{key} + " is " + json_type_name(*v) + ", not an object";
    return false;
  }
  for (const auto& m : v->GetObject()) {
    if (!m.value.IsString()) {
      why = std::string{key} + "." + m.name.GetString() + " is not a string";
      return false;
    }
    out[m.name.GetString()] = m.value.GetString();
  }
  return true;
}

bool read_strings(const json_value& obj, const char* key, std::vector<std::string>& out,
                  std::string& why) {
  auto v = json_member(obj, key);
  if (!v || v->IsNull()) {
    return true;
  }
  if (!v->IsArray()) {
    why = std::string{key} + " is " + json_type_name(*v) + ", not an array";
    return false;
  }
  for (const auto& e : v->GetArray()) {
    if (!e.IsString()) {
      why = std::string{key} + " holds " + json_type_name(e) + ", not only strings";
      return false;
    }
    out.emplace_back(e.GetString(), e.GetStringLength());
  }
  return true;
}

void write_text(json_writer& w, const char* key, const std::string& text) {
  w.Key(key);
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

void write_map(json_writer& w, const char* key, const std::map<std::string, std::string>& m) {
  w.Key(key);
  w.StartObject();
  for (const auto& [k, v] : m) {
    write_text(w, k.c_str(), v);
  }
  w.EndObject();
}

void write_strings(json_writer& w, const char* key, const std::vector<std::string>& items) {
  w.Key(key);
  w.StartArray();
  for (const auto& s : items) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  }
  w.EndArray();
}

std::string text_of(const rapidjson::StringBuffer& buf) {
  return {buf.GetString(), buf.GetSize()};
}

caf::error parse_document(const std::string& json, const std::string& what, rapidjson::Document& doc) {
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return malformed(what, std::string{rapidjson::GetParseError_En(doc.GetParseError())}
                             + " at offset " + std::to_string(doc.GetErrorOffset()));
  }
  if (!doc.IsObject()) {
    return malformed(what, "not a JSON object");
  }
  return caf::none;
}

bool read_meta(const json_value& doc, object_meta& out, std::string& why) {
  const auto& meta = json_object(doc, "metadata");
  out.name = json_text(meta, "name");
  out.uid = json_text(meta, "uid");
  out.resource_version = json_text(meta, "resourceVersion");
  if (auto g = json_member(meta, "generation"); g && g->IsInt64()) {
    out.generation = g->GetInt64();
  }
  out.deleting = !json_text(meta, "deletionTimestamp").empty();
  out.delete_request = json_text(json_object(meta, "annotations"), delete_request_annotation);
  return read_strings(meta, "finalizers", out.finalizers, why);
}

caf::expected<object_meta> parse_meta(const std::string& json, const std::string& what) {
  rapidjson::Document doc;
  if (auto err = parse_document(json, what, doc)) {
    return err;
  }
  object_meta out;
  std::string why;
  if (!read_meta(doc, out, why)) {
    return malformed(what, why);
  }
  return out;
}

std::string condition_since(const json_value& status, const char* type) {
  auto list = json_member(status, "conditions");
  if (!list || !list->IsArray()) {
    return {};
  }
  for (const auto& c : list->GetArray()) {
    if (c.IsObject() && json_text(c, "type") == type) {
      return json_text(c, "lastTransitionTime");
    }
  }
  return {};
}

void write_conditions(json_writer& w, const std::vector<condition>& conditions) {
  auto now = rfc3339(std::chrono::system_clock::now());
  w.Key("conditions");
  w.StartArray();
  for (const auto& c : conditions) {
    w.StartObject();
    write_text(w, "type", c.type);
    write_text(w, "status", c.holds ? "True" : "False");
    write_text(w, "reason", c.reason);
    write_text(w, "message", c.message);
    write_text(w, "lastTransitionTime", c.since.empty() ? now : c.since);
    w.Key("observedGeneration");
    w.Int64(c.generation);
    w.EndObject();
  }
  w.EndArray();
}

std::string transition_time(bool held, bool holds, const std::string& before) {
  return held == holds ? before : std::string{};
}

std::string condition_reason(const std::string& code) {
  std::string out;
  bool upper = true;
  for (char c : code) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

void write_new_meta(json_writer& w, const std::string& name, const std::string& node) {
  w.Key("metadata");
  w.StartObject();
  write_text(w, "name", name);
  w.Key("labels");
  w.StartObject();
  write_text(w, node_label, node_label_value(node));
  write_text(w, "app.kubernetes.io/managed-by", "berth");
  w.EndObject();
  write_strings(w, "finalizers", {storage_finalizer});
  w.EndObject();
}

} // namespace berth::kube::detail
