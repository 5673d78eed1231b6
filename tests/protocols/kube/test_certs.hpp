#pragma once

// Certificates made at test start with the OpenSSL API: a self-signed CA and leaf
// certificates it signs (EC P-256, valid for a day).

#include <string>
#include <vector>

namespace berth::test {

/// A certificate and its private key, both PEM.
struct cert_pair {
  std::string cert_pem;
  std::string key_pem;
};

/// A new self-signed CA named `common_name`.
cert_pair make_ca(const std::string& common_name);

/// A certificate for `common_name` signed by `ca`, with subjectAltNames `sans`
/// ("IP:127.0.0.1", "DNS:localhost"); server and client use.
cert_pair issue_cert(const cert_pair& ca, const std::string& common_name,
                     const std::vector<std::string>& sans);

} // namespace berth::test
