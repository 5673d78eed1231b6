#include "protocols/admin/admin_codec.hpp"

#include <cstdio>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"

namespace berth::admin {

namespace {

caf::error invalid(std::string message) {
  return make_error(ec::invalid_argument, std::move(message));
}

std::string quote(const rapidjson::Value& s) {
  return quote_input(std::string_view{s.GetString(), s.GetStringLength()});
}

/// Parses `body` into `doc`: a JSON object whose only member is `field` (an unknown
/// member is refused, so a misspelt field is not silently ignored). `example` is the
/// body to send, for the messages.
caf::error parse_body(std::string_view body, const char* field, const char* example,
                      rapidjson::Document& doc) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return invalid(std::string{"request body is empty: send "} + example);
  }
  // Iterative parsing: deeply nested input cannot exhaust the stack.
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (doc.HasParseError()) {
    return invalid(std::string{"request body is not JSON (offset "}
                   + std::to_string(doc.GetErrorOffset()) + ": "
                   + rapidjson::GetParseError_En(doc.GetParseError()) + "): send " + example);
  }
  if (!doc.IsObject()) {
    return invalid(std::string{"request body must be a JSON object, got "} + json_type_name(doc)
                   + ": send " + example);
  }
  for (const auto& m : doc.GetObject()) {
    if (std::string_view{m.name.GetString(), m.name.GetStringLength()} != field) {
      return invalid("unknown field " + quote(m.name) + ": send " + example);
    }
  }
  if (!doc.HasMember(field)) {
    return invalid(std::string{"missing \""} + field + "\": send " + example);
  }
  return {};
}

} // namespace

caf::expected<uint64_t> decode_resize(std::string_view body) {
  constexpr const char* example = R"({"size_bytes": 2147483648})";
  rapidjson::Document doc;
  if (auto err = parse_body(body, "size_bytes", example, doc)) {
    return err;
  }
  const auto& size = doc["size_bytes"];
  if (!size.IsNumber()) {
    return invalid(std::string{"\"size_bytes\" must be a positive integer (bytes), got "}
                   + json_type_name(size));
  }
  if (!size.IsUint64() || size.GetUint64() == 0) {
    // Zero, negative, fractional or beyond 2^64-1 (RapidJSON keeps the last two as
    // a double): name the number as it was sent.
    std::string text;
    if (size.IsInt64()) {
      text = std::to_string(size.GetInt64());
    } else {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.17g", size.GetDouble());
      text = std::string{buf} + " (not an integer of at most 64 bits)";
    }
    return invalid("\"size_bytes\" must be a positive integer (bytes), got " + text);
  }
  return size.GetUint64();
}

caf::expected<option_map> decode_modify(std::string_view body) {
  constexpr const char* example = R"({"parameters": {"readAheadKB": "256"}})";
  rapidjson::Document doc;
  if (auto err = parse_body(body, "parameters", example, doc)) {
    return err;
  }
  const auto& params = doc["parameters"];
  if (!params.IsObject()) {
    return invalid(std::string{"\"parameters\" must be an object of strings, got "}
                   + json_type_name(params) + ": send " + example);
  }
  if (params.MemberCount() == 0) {
    return invalid(std::string{"\"parameters\" is empty: name at least one, e.g. "} + example);
  }
  if (params.MemberCount() > limits::max_options) {
    return invalid("\"parameters\" has " + std::to_string(params.MemberCount())
                   + " entries; at most " + std::to_string(limits::max_options)
                   + " are allowed");
  }
  option_map out;
  for (const auto& m : params.GetObject()) {
    std::string key{m.name.GetString(), m.name.GetStringLength()};
    if (key.empty()) {
      return invalid("\"parameters\" has an empty key");
    }
    if (key.size() > limits::max_option_key_bytes) {
      return invalid("\"parameters\" key " + quote(m.name) + " is " + std::to_string(key.size())
                     + " bytes long; at most " + std::to_string(limits::max_option_key_bytes)
                     + " are allowed");
    }
    if (!m.value.IsString()) {
      return invalid("\"parameters\" " + quote(m.name) + " must be a string, got "
                     + json_type_name(m.value) + " (write numbers as strings: \"256\")");
    }
    if (m.value.GetStringLength() > limits::max_option_value_bytes) {
      return invalid("\"parameters\" " + quote(m.name) + " has a value of "
                     + std::to_string(m.value.GetStringLength()) + " bytes; at most "
                     + std::to_string(limits::max_option_value_bytes) + " are allowed");
    }
    if (!out.emplace(std::move(key), std::string{m.value.GetString(), m.value.GetStringLength()})
           .second) {
      return invalid("\"parameters\" names " + quote(m.name) + " twice: give each key once");
    }
  }
  return out;
}

namespace {

/// The string of a body whose only member is `field` (parse_body's rules).
caf::expected<std::string> string_body(std::string_view body, const char* field,
                                       const char* example) {
  rapidjson::Document doc;
  if (auto err = parse_body(body, field, example, doc)) {
    return err;
  }
  const auto& v = doc[field];
  if (!v.IsString()) {
    return invalid(std::string{"\""} + field + "\" must be a string, got " + json_type_name(v)
                   + ": send " + example);
  }
  return std::string{v.GetString(), v.GetStringLength()};
}

} // namespace

caf::expected<std::string> decode_release(std::string_view body) {
  constexpr const char* example = R"({"id": "MOUNT_ID"} (berthctl inspect NAME lists the IDs))";
  auto got = string_body(body, "id", example);
  if (!got) {
    return got;
  }
  const std::string& id = *got;
  if (id.empty()) {
    return invalid(std::string{"\"id\" is empty: send "} + example);
  }
  if (id.size() > limits::max_mount_id_bytes) {
    return invalid("\"id\" is " + std::to_string(id.size()) + " bytes, more than a mount ID has ("
                   + std::to_string(limits::max_mount_id_bytes) + ")");
  }
  return id;
}

caf::expected<std::string> decode_snapshot(std::string_view body) {
  return string_body(body, "name", R"({"name": "SNAPSHOT"})");
}

std::string encode_error(std::string_view message) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  w.StartObject();
  w.Key("error");
  w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

std::string encode_release(const std::string& volume, const std::string& id, uint32_t dropped,
                           bool checked, const std::string& unchecked_why) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  auto str = [&w](const std::string& s) {
    w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  };
  w.StartObject();
  w.Key("volume");
  str(volume);
  w.Key("id");
  str(id);
  w.Key("dropped");
  w.Uint(dropped);
  w.Key("checked");
  w.Bool(checked);
  w.Key("unchecked_why");
  str(unchecked_why);
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

} // namespace berth::admin
