#pragma once

// Where the Kubernetes API is and how to authenticate to it: in-cluster (the service
// account's files) or a kubeconfig file. Loading checks everything it can up front, so a
// bad configuration fails at start with the file, the context and the field it lacks.

#include <string>

#include <caf/expected.hpp>

namespace berth::kube {

/// The service account directory every pod gets.
inline constexpr const char* default_service_account_dir =
  "/var/run/secrets/kubernetes.io/serviceaccount";

/// A resolved client configuration. Never log `token` or the key: describe() omits them.
struct kube_config {
  std::string server;    ///< "https://host:port" (no trailing slash), for messages
  std::string host;      ///< host name or IP literal (no brackets), for connect and verification
  std::string port;      ///< TCP port
  std::string base_path; ///< path prefix of the server URL ("" or "/prefix")
  std::string ca_pem;    ///< trusted CA certificates (PEM); empty: the system's default paths
  std::string token;      ///< a fixed bearer token ("" when none or when token_file is set)
  std::string token_file; ///< a token file re-read for every request (rotation)
  std::string client_cert_pem; ///< client certificate chain (PEM), or ""
  std::string client_key_pem;  ///< its private key (PEM), or ""
  std::string origin; ///< where this came from, for messages: "kubeconfig F (context C)" or "in-cluster (DIR)"

  /// "https://host:port from ORIGIN", with no secret in it.
  std::string describe() const;
};

/// In-cluster configuration: DIR/token (re-read per request), DIR/ca.crt, and the API at
/// host:port (KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT). Errors name the missing
/// file or variable.
caf::expected<kube_config> in_cluster_config(const std::string& dir, const std::string& host,
                                             const std::string& port);

/// in_cluster_config with DIR (default_service_account_dir unless given) and the
/// KUBERNETES_SERVICE_HOST/PORT environment variables.
caf::expected<kube_config> in_cluster_config(const std::string& dir = default_service_account_dir);

/// Reads a kubeconfig: `context` (or its current-context) → cluster server,
/// certificate-authority(-data) → user token, tokenFile or client-certificate(-data) +
/// client-key(-data). Relative file names are relative to the kubeconfig's directory.
/// Errors (ec::invalid_argument) name the file, the context and the missing field.
caf::expected<kube_config> kubeconfig_config(const std::string& path,
                                             const std::string& context = "");

/// Splits "https://host[:port][/path]" into cfg.server, host, port and base_path.
caf::error parse_server_url(const std::string& url, kube_config& cfg);

/// The bearer token to send now: cfg.token, or the current content of cfg.token_file
/// (whitespace trimmed). "" when the config has neither. An unreadable or empty file is an
/// error naming the file.
caf::expected<std::string> current_token(const kube_config& cfg);

} // namespace berth::kube
