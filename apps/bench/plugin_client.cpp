#include "apps/bench/plugin_client.hpp"

#include <rapidjson/document.h>

#include "core/errors.hpp"
#include "core/json_text.hpp"

namespace berth::bench {

namespace {

/// Reads Err from a reply body; returns false (with a reason) when the body is not JSON.
bool read_err(const std::string& body, std::string& err) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    err = "reply is not a JSON object: " + body.substr(0, 200);
    return false;
  }
  auto it = doc.FindMember("Err");
  if (it != doc.MemberEnd() && it->value.IsString()) {
    err = it->value.GetString();
  }
  return true;
}

} // namespace

plugin_client::plugin_client(std::string socket_path) : socket_path_(std::move(socket_path)) {
}

call_result plugin_client::call(const std::string& endpoint, const std::string& body) {
  call_result res;
  if (!http_) {
    http_ = std::make_unique<unix_http_client>(socket_path_);
  }
  auto target = endpoint.empty() || endpoint[0] != '/' ? "/VolumeDriver." + endpoint : endpoint;
  auto reply = http_->post(target, body);
  if (!reply) {
    // Start over with a fresh connection on the next call.
    http_.reset();
    res.err = "transport: " + describe(reply.error());
    return res;
  }
  res.body = std::move(reply->body);
  std::string err;
  bool is_json = read_err(res.body, err);
  if (!err.empty()) {
    res.err = err;
    return res;
  }
  if (reply->status != 200) {
    res.err = "HTTP " + std::to_string(reply->status) + ": " + res.body.substr(0, 200);
    return res;
  }
  if (!is_json) {
    res.err = std::move(err);
    return res;
  }
  res.ok = true;
  return res;
}

call_result plugin_client::create(const std::string& name) {
  return call("Create", "{\"Name\":" + json_quote(name) + ",\"Opts\":{}}");
}

call_result plugin_client::remove(const std::string& name) {
  return call("Remove", "{\"Name\":" + json_quote(name) + "}");
}

call_result plugin_client::mount(const std::string& name, const std::string& id) {
  return call("Mount", "{\"Name\":" + json_quote(name) + ",\"ID\":" + json_quote(id) + "}");
}

call_result plugin_client::unmount(const std::string& name, const std::string& id) {
  return call("Unmount", "{\"Name\":" + json_quote(name) + ",\"ID\":" + json_quote(id) + "}");
}

call_result plugin_client::list(std::vector<std::string>& names) {
  auto res = call("List", "{}");
  if (!res.ok) {
    return res;
  }
  rapidjson::Document doc;
  doc.Parse(res.body.c_str(), res.body.size());
  auto it = doc.FindMember("Volumes");
  if (it == doc.MemberEnd() || !(it->value.IsArray() || it->value.IsNull())) {
    res.ok = false;
    res.err = "List reply has no Volumes array";
    return res;
  }
  names.clear();
  if (it->value.IsArray()) {
    for (auto& v : it->value.GetArray()) {
      if (v.IsObject() && v.HasMember("Name") && v["Name"].IsString()) {
        names.emplace_back(v["Name"].GetString());
      }
    }
  }
  return res;
}

} // namespace berth::bench
