#pragma once

// The JSON the stand-in API server answers with, in the shapes of the real
// kube-apiserver: Status objects, VolumeAttachment watch events and bookmarks, Nodes;
// and the bits of URL handling its request parser needs.

#include <cstdint>
#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "protocols/kube/kube_api.hpp"

namespace berth::test::kube_shapes {

using writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// Writes the member `key`: `value` (a string).
void str(writer& w, const char* key, const std::string& value);

/// Writes attachment `a` as a VolumeAttachment object at resourceVersion `rv`.
void attachment_object(writer& w, const kube::attachment& a, uint64_t rv);

/// A metav1.Status of `code` (reason "NotFound", "Expired", ...).
std::string status_json(int code, const std::string& reason, const std::string& message);

/// A watch event of `type` ("ADDED", "DELETED") for attachment `a` at resourceVersion `rv`.
std::string event_json(const std::string& type, const kube::attachment& a, uint64_t rv);

/// A BOOKMARK watch event at `rv`, marked as the end of the initial events.
std::string bookmark_json(uint64_t rv);

/// An ERROR watch event carrying a Status (410 Expired, for instance).
std::string error_event_json(int code, const std::string& reason, const std::string& message);

/// The Node `name` with the labels, taints and spec `n` holds.
std::string node_json(const std::string& name, const kube::node_info& n);

/// %XX-decodes a query component; '+' is a space, as in a form-encoded query.
std::string url_decode(const std::string& in);

/// Non-empty and all ASCII digits.
bool is_number(const std::string& s);

} // namespace berth::test::kube_shapes
