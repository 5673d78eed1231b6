#include "protocols/docker/docker_codec.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "core/limits.hpp"
#include "core/names.hpp"
#include "core/record_json.hpp"
#include "core/text.hpp"

namespace berth::docker {

namespace {

using writer = rapidjson::Writer<rapidjson::StringBuffer>;

caf::error invalid(std::string message) {
  return make_error(ec::invalid_argument, std::move(message));
}

std::string as_string(const rapidjson::Value& v) {
  return {v.GetString(), v.GetStringLength()};
}

/// Parses `body` into `doc` and checks that it is an object.
caf::error parse_object(std::string_view body, rapidjson::Document& doc) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return invalid("request body is empty: expected a JSON object");
  }
  // Iterative parsing: deeply nested input cannot exhaust the stack.
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (doc.HasParseError()) {
    return invalid(std::string{"malformed JSON at offset "} + std::to_string(doc.GetErrorOffset()) +
                   ": " + rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) {
    return invalid(std::string{"request body must be a JSON object, got "} + json_type_name(doc));
  }
  return {};
}

/// Reads the required string member `key`; fails if absent, not a string or empty.
caf::expected<std::string> required_string(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) {
    return invalid(std::string{"missing \""} + key + "\"");
  }
  if (!it->value.IsString()) {
    return invalid(std::string{"\""} + key + "\" must be a string, got " + json_type_name(it->value));
  }
  if (it->value.GetStringLength() == 0) {
    return invalid(std::string{"\""} + key + "\" is empty");
  }
  return as_string(it->value);
}

caf::expected<std::string> read_name(const rapidjson::Value& obj) {
  auto name = required_string(obj, "Name");
  if (!name) {
    return name;
  }
  if (name->size() > limits::max_name_bytes) {
    return invalid("volume name " + quote_input(*name) + " is " + std::to_string(name->size())
                   + " bytes long, at most " + std::to_string(limits::max_name_bytes)
                   + " are allowed");
  }
  if (!is_valid_volume_name(*name)) {
    return invalid(invalid_name_message("volume", *name));
  }
  return name;
}

caf::expected<option_map> read_options(const rapidjson::Value& obj) {
  option_map out;
  auto it = obj.FindMember("Opts");
  if (it == obj.MemberEnd() || it->value.IsNull()) {
    return out;
  }
  if (!it->value.IsObject()) {
    return invalid(std::string{"\"Opts\" must be an object of strings, got "} +
                   json_type_name(it->value));
  }
  if (it->value.MemberCount() > limits::max_options) {
    return invalid("\"Opts\" has " + std::to_string(it->value.MemberCount())
                   + " options, at most " + std::to_string(limits::max_options)
                   + " are allowed");
  }
  for (const auto& m : it->value.GetObject()) {
    auto key = as_string(m.name);
    if (key.size() > limits::max_option_key_bytes) {
      return invalid("option name " + quote_input(key) + " is " + std::to_string(key.size())
                     + " bytes long, at most " + std::to_string(limits::max_option_key_bytes)
                     + " are allowed");
    }
    if (!m.value.IsString()) {
      return invalid("option " + quote_input(key) + " must be a string, got " +
                     json_type_name(m.value));
    }
    if (m.value.GetStringLength() > limits::max_option_value_bytes) {
      return invalid("the value of option " + quote_input(key) + " is "
                     + std::to_string(m.value.GetStringLength()) + " bytes long, at most "
                     + std::to_string(limits::max_option_value_bytes) + " are allowed");
    }
    out[key] = as_string(m.value);
  }
  return out;
}

void put(writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void key(writer& w, std::string_view s) {
  w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

std::string finish(const rapidjson::StringBuffer& buf) {
  return {buf.GetString(), buf.GetSize()};
}

} // namespace

// -- decoding ------------------------------------------------------------------

caf::expected<create_request> decode_create(std::string_view body) {
  rapidjson::Document doc;
  if (auto err = parse_object(body, doc)) {
    return err;
  }
  auto name = read_name(doc);
  if (!name) {
    return name.error();
  }
  auto options = read_options(doc);
  if (!options) {
    return options.error();
  }
  return create_request{std::move(*name), std::move(*options)};
}

caf::expected<name_request> decode_name(std::string_view body) {
  rapidjson::Document doc;
  if (auto err = parse_object(body, doc)) {
    return err;
  }
  auto name = read_name(doc);
  if (!name) {
    return name.error();
  }
  return name_request{std::move(*name)};
}

caf::expected<mount_request> decode_mount(std::string_view body) {
  rapidjson::Document doc;
  if (auto err = parse_object(body, doc)) {
    return err;
  }
  auto name = read_name(doc);
  if (!name) {
    return name.error();
  }
  auto id = required_string(doc, "ID");
  if (!id) {
    return id.error();
  }
  if (id->size() > limits::max_mount_id_bytes) {
    return invalid("mount ID " + quote_input(*id) + " is " + std::to_string(id->size())
                   + " bytes long, at most " + std::to_string(limits::max_mount_id_bytes)
                   + " are allowed");
  }
  if (!is_valid_mount_id(*id)) {
    return invalid("invalid mount ID " + quote_input(*id) + ": must be 1 to "
                   + std::to_string(limits::max_mount_id_bytes)
                   + " characters without control characters");
  }
  return mount_request{std::move(*name), std::move(*id)};
}

// -- encoding ------------------------------------------------------------------

std::string encode_ok() {
  return R"({"Err":""})";
}

std::string encode_error(std::string_view message) {
  return plugin_error_body(message.empty() ? std::string_view{"unknown error"} : message);
}

std::string encode_mountpoint(std::string_view mountpoint) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  key(w, "Mountpoint");
  put(w, mountpoint);
  key(w, "Err");
  put(w, "");
  w.EndObject();
  return finish(buf);
}

std::string encode_get(const volume_record& rec, const volume_conditions& conditions) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  key(w, "Volume");
  w.StartObject();
  key(w, "Name");
  put(w, rec.name);
  key(w, "Mountpoint");
  put(w, rec.mounted ? std::string_view{rec.mountpoint} : std::string_view{});
  key(w, "CreatedAt");
  put(w, rec.created_at);
  key(w, "Status");
  w.StartObject();
  key(w, "mounts");
  w.StartObject();
  for (const auto& [id, count] : rec.mounts) {
    key(w, id);
    w.Uint(count);
  }
  w.EndObject();
  key(w, "backend");
  put(w, rec.backend);
  key(w, "created_at");
  put(w, rec.created_at);
  key(w, "options");
  w.StartObject();
  for (const auto& [k, v] : rec.options) {
    key(w, k);
    put(w, v);
  }
  w.EndObject();
  key(w, "mounted");
  w.Bool(rec.mounted);
  write_health(w, conditions);
  w.EndObject(); // Status
  w.EndObject(); // Volume
  key(w, "Err");
  put(w, "");
  w.EndObject();
  return finish(buf);
}

std::string encode_list(const shared_records& recs) {
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  key(w, "Volumes");
  w.StartArray();
  for (const auto& rec : recs) {
    w.StartObject();
    key(w, "Name");
    put(w, rec->name);
    key(w, "Mountpoint");
    put(w, rec->mounted ? std::string_view{rec->mountpoint} : std::string_view{});
    w.EndObject();
  }
  w.EndArray();
  key(w, "Err");
  put(w, "");
  w.EndObject();
  return finish(buf);
}

std::string encode_capabilities() {
  return R"({"Capabilities":{"Scope":"local"}})";
}

std::string encode_activate() {
  return R"({"Implements":["VolumeDriver"]})";
}

} // namespace berth::docker
