#pragma once

// Words for JSON input in error messages, shared by the codecs that decode
// client bodies (protocols/docker, protocols/admin), and the lenient readers of
// the API clients (protocols/kube, protocols/docker/engine): a field that is
// missing or of another type reads as empty there. And the one JSON string writer
// (RapidJSON's) for text written by hand around it: the Docker plugin protocol's
// {"Err":...} body, which the plugin codec and the HTTP transport both answer with.

#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace berth {

/// "a string", "an object", ...: what a client sent where something else belonged.
inline const char* json_type_name(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType: return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType: return "a boolean";
    case rapidjson::kObjectType: return "an object";
    case rapidjson::kArrayType: return "an array";
    case rapidjson::kStringType: return "a string";
    case rapidjson::kNumberType: return "a number";
  }
  return "unknown";
}

/// The member `key` of `obj`, or null when `obj` is no object or lacks it.
inline const rapidjson::Value* json_member(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) {
    return nullptr;
  }
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

/// The string member `key` of `obj`; "" when it is missing or not a string.
inline std::string json_text(const rapidjson::Value& obj, const char* key) {
  auto v = json_member(obj, key);
  return v && v->IsString() ? std::string{v->GetString(), v->GetStringLength()} : std::string{};
}

/// The object member `key` of `obj`; an empty object when it is missing or not one.
inline const rapidjson::Value& json_object(const rapidjson::Value& obj, const char* key) {
  static const rapidjson::Value empty{rapidjson::kObjectType};
  auto v = json_member(obj, key);
  return v && v->IsObject() ? *v : empty;
}

/// `s` as a JSON string literal, quotes included: `"` and `\` escaped, a control character
/// as \b, \f, \n, \r, \t or \u00XX, every other byte as it is.
inline std::string json_quote(std::string_view s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return {buf.GetString(), buf.GetSize()};
}

/// {"Err":MESSAGE}: the error body of the Docker plugin protocol, which dockerd shows as
/// the request's error.
inline std::string plugin_error_body(std::string_view message) {
  return "{\"Err\":" + json_quote(message) + "}";
}

} // namespace berth
