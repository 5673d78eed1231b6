#include "protocols/kube/kube_json.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "core/errors.hpp"

namespace berth::kube {

namespace {

using value = rapidjson::Value;

const value* member(const value& obj, const char* key) {
  if (!obj.IsObject()) {
    return nullptr;
  }
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

std::string text(const value& obj, const char* key) {
  auto v = member(obj, key);
  return v && v->IsString() ? std::string{v->GetString(), v->GetStringLength()} : std::string{};
}

const value& object(const value& obj, const char* key) {
  static const value empty{rapidjson::kObjectType};
  auto v = member(obj, key);
  return v && v->IsObject() ? *v : empty;
}

caf::error malformed(const char* what, const std::string& why) {
  return make_error(ec::unavailable, std::string{"kube API sent a malformed "} + what + ": " + why);
}

caf::expected<rapidjson::Document> parse(const std::string& json, const char* what) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return malformed(what, std::string{rapidjson::GetParseError_En(doc.GetParseError())} +
                             " at offset " + std::to_string(doc.GetErrorOffset()));
  }
  if (!doc.IsObject()) {
    return malformed(what, "not a JSON object");
  }
  return doc;
}

attachment attachment_of(const value& obj) {
  attachment a;
  a.name = text(object(obj, "metadata"), "name");
  const auto& spec = object(obj, "spec");
  a.node = text(spec, "nodeName");
  a.attacher = text(spec, "attacher");
  a.volume = text(object(spec, "source"), "persistentVolumeName");
  return a;
}

api_status status_of(const value& obj) {
  api_status s;
  if (auto c = member(obj, "code"); c && c->IsInt()) {
    s.code = c->GetInt();
  }
  s.reason = text(obj, "reason");
  s.message = text(obj, "message");
  return s;
}

} // namespace

caf::expected<node_info> parse_node(const std::string& json) {
  auto doc = parse(json, "Node");
  if (!doc) {
    return doc.error();
  }
  node_info out;
  out.found = true;
  const auto& spec = object(*doc, "spec");
  if (auto u = member(spec, "unschedulable"); u && u->IsBool()) {
    out.unschedulable = u->GetBool();
  }
  if (auto taints = member(spec, "taints"); taints && taints->IsArray()) {
    for (const auto& t : taints->GetArray()) {
      out.taints.push_back({text(t, "key"), text(t, "value"), text(t, "effect")});
    }
  }
  return out;
}

caf::expected<attachment_page> parse_attachment_list(const std::string& json) {
  auto doc = parse(json, "VolumeAttachmentList");
  if (!doc) {
    return doc.error();
  }
  attachment_page page;
  const auto& meta = object(*doc, "metadata");
  page.resource_version = text(meta, "resourceVersion");
  page.next = text(meta, "continue");
  auto items = member(*doc, "items");
  if (items && items->IsArray()) {
    for (const auto& item : items->GetArray()) {
      page.items.push_back(attachment_of(item));
    }
  } else if (items && !items->IsNull()) {
    return malformed("VolumeAttachmentList", "items is not an array");
  }
  return page;
}

caf::expected<watch_line> parse_watch_line(const std::string& json) {
  auto doc = parse(json, "watch event");
  if (!doc) {
    return doc.error();
  }
  watch_line out;
  out.event.type = text(*doc, "type");
  if (out.event.type.empty()) {
    return malformed("watch event", "no type");
  }
  auto obj = member(*doc, "object");
  if (!obj || !obj->IsObject()) {
    return malformed("watch event", out.event.type + " without an object");
  }
  if (out.event.type == "ERROR") {
    out.status = status_of(*obj);
    return out;
  }
  out.event.resource_version = text(object(*obj, "metadata"), "resourceVersion");
  if (out.event.type != "BOOKMARK") {
    out.event.object = attachment_of(*obj);
  }
  return out;
}

api_status parse_status(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return {};
  }
  return status_of(doc);
}

} // namespace berth::kube
