#pragma once

// Small text helpers of the Kubernetes client: base64 (kubeconfig *-data fields),
// percent-encoding (query values), bounded file reads, redaction.

#include <optional>
#include <string>

namespace berth::kube::detail {

/// Decodes standard base64 (padding optional, whitespace skipped); nullopt when malformed.
std::optional<std::string> base64_decode(const std::string& in);

/// Encodes standard base64 with padding.
std::string base64_encode(const std::string& in);

/// Percent-encodes everything but RFC 3986 unreserved characters.
std::string url_encode(const std::string& in);

/// Reads a whole file of at most `limit` bytes; the error text says why ("no such file", "larger than N bytes").
bool read_file(const std::string& path, size_t limit, std::string& out, std::string& why);

/// `text` with every occurrence of `secret` replaced by "<redacted>" (nothing when secret is empty).
std::string redact(std::string text, const std::string& secret);

/// `s` without leading and trailing whitespace.
std::string trim(const std::string& s);

} // namespace berth::kube::detail
