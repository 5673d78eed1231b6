#include "protocols/kube/kube_json.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/errors.hpp"
#include "core/json_text.hpp"

namespace berth::kube {

namespace {

using value = rapidjson::Value;

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
  a.name = json_text(json_object(obj, "metadata"), "name");
  const auto& spec = json_object(obj, "spec");
  a.node = json_text(spec, "nodeName");
  a.attacher = json_text(spec, "attacher");
  a.volume = json_text(json_object(spec, "source"), "persistentVolumeName");
  return a;
}

api_status status_of(const value& obj) {
  api_status s;
  if (auto c = json_member(obj, "code"); c && c->IsInt()) {
    s.code = c->GetInt();
  }
  s.reason = json_text(obj, "reason");
  s.message = json_text(obj, "message");
  return s;
}

std::string text_of(const value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  v.Accept(w);
  return {buf.GetString(), buf.GetSize()};
}

} // namespace

caf::expected<node_info> parse_node(const std::string& json) {
  auto doc = parse(json, "Node");
  if (!doc) {
    return doc.error();
  }
  node_info out;
  out.found = true;
  const auto& spec = json_object(*doc, "spec");
  if (auto u = json_member(spec, "unschedulable"); u && u->IsBool()) {
    out.unschedulable = u->GetBool();
  }
  if (auto taints = json_member(spec, "taints"); taints && taints->IsArray()) {
    for (const auto& t : taints->GetArray()) {
      out.taints.push_back({json_text(t, "key"), json_text(t, "value"), json_text(t, "effect")});
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
  const auto& meta = json_object(*doc, "metadata");
  page.resource_version = json_text(meta, "resourceVersion");
  page.next = json_text(meta, "continue");
  auto items = json_member(*doc, "items");
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
  out.event.type = json_text(*doc, "type");
  if (out.event.type.empty()) {
    return malformed("watch event", "no type");
  }
  auto obj = json_member(*doc, "object");
  if (!obj || !obj->IsObject()) {
    return malformed("watch event", out.event.type + " without an object");
  }
  if (out.event.type == "ERROR") {
    out.status = status_of(*obj);
    return out;
  }
  out.event.resource_version = json_text(json_object(*obj, "metadata"), "resourceVersion");
  if (out.event.type != "BOOKMARK") {
    out.event.object = attachment_of(*obj);
  }
  return out;
}

caf::expected<object_page> parse_object_list(const std::string& json) {
  auto doc = parse(json, "List");
  if (!doc) {
    return doc.error();
  }
  object_page page;
  const auto& meta = json_object(*doc, "metadata");
  page.resource_version = json_text(meta, "resourceVersion");
  page.next = json_text(meta, "continue");
  auto items = json_member(*doc, "items");
  if (items && items->IsArray()) {
    for (const auto& item : items->GetArray()) {
      if (!item.IsObject()) {
        return malformed("List", "an item is not an object");
      }
      page.items.push_back(text_of(item));
    }
  } else if (items && !items->IsNull()) {
    return malformed("List", "items is not an array");
  }
  return page;
}

caf::expected<object_watch_line> parse_object_watch_line(const std::string& json) {
  auto doc = parse(json, "watch event");
  if (!doc) {
    return doc.error();
  }
  object_watch_line out;
  out.event.type = json_text(*doc, "type");
  if (out.event.type.empty()) {
    return malformed("watch event", "no type");
  }
  auto obj = json_member(*doc, "object");
  if (!obj || !obj->IsObject()) {
    return malformed("watch event", out.event.type + " without an object");
  }
  if (out.event.type == "ERROR") {
    out.status = status_of(*obj);
    return out;
  }
  out.event.resource_version = json_text(json_object(*obj, "metadata"), "resourceVersion");
  out.event.object = text_of(*obj);
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
