#include "tests/protocols/kube/kube_shapes.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "protocols/kube/detail/text.hpp"

namespace berth::test::kube_shapes {



void str(writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void attachment_object(writer& w, const kube::attachment& a, uint64_t rv) {
  w.StartObject();
  str(w, "kind", "VolumeAttachment");
  str(w, "apiVersion", "storage.k8s.io/v1");
  w.Key("metadata");
  w.StartObject();
  str(w, "name", a.name);
  str(w, "uid", "uid-" + a.name);
  str(w, "resourceVersion", std::to_string(rv));
  str(w, "creationTimestamp", "2026-01-01T00:00:00Z");
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  str(w, "attacher", a.attacher);
  str(w, "nodeName", a.node);
  w.Key("source");
  w.StartObject();
  if (a.volume.empty()) {
    w.Key("inlineVolumeSpec");
    w.StartObject();
    w.EndObject();
  } else {
    str(w, "persistentVolumeName", a.volume);
  }
  w.EndObject();
  w.EndObject();
  w.Key("status");
  w.StartObject();
  w.Key("attached");
  w.Bool(true);
  w.EndObject();
  w.EndObject();
}

std::string status_json(int code, const std::string& reason, const std::string& message) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  str(w, "kind", "Status");
  str(w, "apiVersion", "v1");
  w.Key("metadata");
  w.StartObject();
  w.EndObject();
  str(w, "status", "Failure");
  str(w, "message", message);
  str(w, "reason", reason);
  w.Key("code");
  w.Int(code);
  w.EndObject();
  return buf.GetString();
}

std::string event_json(const std::string& type, const kube::attachment& a, uint64_t rv) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  str(w, "type", type);
  w.Key("object");
  attachment_object(w, a, rv);
  w.EndObject();
  return buf.GetString();
}

std::string bookmark_json(uint64_t rv) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  str(w, "type", "BOOKMARK");
  w.Key("object");
  w.StartObject();
  str(w, "kind", "VolumeAttachment");
  str(w, "apiVersion", "storage.k8s.io/v1");
  w.Key("metadata");
  w.StartObject();
  str(w, "resourceVersion", std::to_string(rv));
  w.Key("annotations");
  w.StartObject();
  str(w, "k8s.io/initial-events-end", "true");
  w.EndObject();
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  str(w, "attacher", "");
  str(w, "nodeName", "");
  w.Key("source");
  w.StartObject();
  w.EndObject();
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return buf.GetString();
}

std::string error_event_json(int code, const std::string& reason, const std::string& message) {
  return "{\"type\":\"ERROR\",\"object\":" + status_json(code, reason, message) + "}";
}

std::string node_json(const std::string& name, const kube::node_info& n) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  str(w, "kind", "Node");
  str(w, "apiVersion", "v1");
  w.Key("metadata");
  w.StartObject();
  str(w, "name", name);
  str(w, "resourceVersion", "1");
  w.Key("labels");
  w.StartObject();
  str(w, "kubernetes.io/hostname", name);
  w.EndObject();
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  str(w, "podCIDR", "10.244.0.0/24");
  if (n.unschedulable) {
    w.Key("unschedulable");
    w.Bool(true);
  }
  if (!n.taints.empty()) {
    w.Key("taints");
    w.StartArray();
    for (const auto& t : n.taints) {
      w.StartObject();
      str(w, "key", t.key);
      if (!t.value.empty()) {
        str(w, "value", t.value);
      }
      str(w, "effect", t.effect);
      str(w, "timeAdded", "2026-01-01T00:00:00Z");
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  w.Key("status");
  w.StartObject();
  w.Key("conditions");
  w.StartArray();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return buf.GetString();
}

std::string url_decode(const std::string& in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size()) {
      out += static_cast<char>(std::stoi(in.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else if (in[i] == '+') {
      out += ' ';
    } else {
      out += in[i];
    }
  }
  return out;
}

bool is_number(const std::string& s) {
  return !s.empty() && s.size() < 19 && s.find_first_not_of("0123456789") == std::string::npos;
}

} // namespace berth::test::kube_shapes
