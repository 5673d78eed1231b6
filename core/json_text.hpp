#pragma once

// Words for JSON input in error messages, shared by the codecs that decode
// client bodies (protocols/docker, protocols/admin).

#include <rapidjson/document.h>

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

} // namespace berth
