#pragma once

// What berth's own objects (BerthVolume, BerthSnapshot) share in their JSON: reading typed
// members with an error that names the field, writing members, and the metadata every
// object has. RapidJSON; pure.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "protocols/kube/object_meta.hpp"

namespace berth::kube::detail {

using json_value = rapidjson::Value;
using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// A malformed answer of the API (ec::unavailable, as any answer berth cannot read).
caf::error malformed(const std::string& what, const std::string& why);

/// An unsigned integer member; untouched when absent. A negative or non-integer value is
/// false, with `why` naming the field.
bool read_u64(const json_value& obj, const char* key, uint64_t& out, std::string& why);
/// A map of strings; untouched when absent.
bool read_map(const json_value& obj, const char* key, std::map<std::string, std::string>& out,
              std::string& why);
/// An array of strings; untouched when absent.
bool read_strings(const json_value& obj, const char* key, std::vector<std::string>& out,
                  std::string& why);

void write_text(json_writer& w, const char* key, const std::string& text);
void write_map(json_writer& w, const char* key, const std::map<std::string, std::string>& m);
void write_strings(json_writer& w, const char* key, const std::vector<std::string>& items);
std::string text_of(const rapidjson::StringBuffer& buf);

/// Parses `json` as an object, or says why not (`what` names the kind).
caf::error parse_document(const std::string& json, const std::string& what, rapidjson::Document& doc);

/// The metadata of `doc`; false (with `why`) when finalizers is not a list of strings.
bool read_meta(const json_value& doc, object_meta& out, std::string& why);
/// The metadata of the object `json` (`what` names it in an error).
caf::expected<object_meta> parse_meta(const std::string& json, const std::string& what);

/// One entry of status.conditions (metav1.Condition's shape), which both kinds carry
/// beside their phase, for `kubectl wait --for=condition=TYPE` and for tools that read
/// conditions only.
struct condition {
  std::string type;
  bool holds = false;  ///< status "True" or "False"
  std::string reason;  ///< one CamelCase word (condition_reason)
  std::string message;
  int64_t generation = 0;
  std::string since;   ///< lastTransitionTime, RFC 3339; "" when there was none
};

/// The lastTransitionTime status.conditions' entry `type` of `status` has; "" when none.
std::string condition_since(const json_value& status, const char* type);

/// Writes "conditions": [...]. An empty `since` is now: the condition changed.
void write_conditions(json_writer& w, const std::vector<condition>& conditions);

/// The lastTransitionTime to write: `before` (the one the object has) while the condition
/// stays what it was, else "" (now).
std::string transition_time(bool held, bool holds, const std::string& before);

/// A condition's reason for berth's error code `code` (core/errors.hpp's name), in the
/// CamelCase the Kubernetes API conventions ask of a reason: out_of_range → OutOfRange.
std::string condition_reason(const std::string& code);

/// metadata of an object to create: its name, the node label of `node`, managed-by berth,
/// and the storage finalizer.
void write_new_meta(json_writer& w, const std::string& name, const std::string& node);

} // namespace berth::kube::detail
