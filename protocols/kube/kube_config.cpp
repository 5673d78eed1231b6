#include "protocols/kube/kube_config.hpp"

#include <cstdlib>
#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "protocols/kube/detail/text.hpp"

namespace berth::kube {

namespace {

using detail::read_file;

caf::error bad(std::string message) {
  return make_error(ec::invalid_argument, std::move(message));
}

/// A string field of a YAML map, "" when absent or null.
std::string text_of(const YAML::Node& map, const char* key) {
  if (!map || !map.IsMap()) {
    return "";
  }
  auto v = map[key];
  if (!v || v.IsNull() || !v.IsScalar()) {
    return "";
  }
  return v.as<std::string>();
}

/// The `what` entry (clusters, users, contexts) named `name`: its inner map (`cluster`, `user`, `context`).
YAML::Node find_named(const YAML::Node& root, const char* list, const char* inner,
                      const std::string& name) {
  auto seq = root[list];
  if (!seq || !seq.IsSequence()) {
    return YAML::Node{YAML::NodeType::Undefined};
  }
  for (const auto& entry : seq) {
    if (entry.IsMap() && text_of(entry, "name") == name) {
      auto body = entry[inner];
      if (body && body.IsMap()) {
        return body;
      }
      return YAML::Node{YAML::NodeType::Map};
    }
  }
  return YAML::Node{YAML::NodeType::Undefined};
}

/// A PEM from FIELD-data (base64) or FIELD (a file, relative to `dir`). `what` names the
/// field's place for errors. Empty result: neither field set.
caf::expected<std::string> pem_of(const YAML::Node& map, const std::string& field,
                                  const std::string& dir, const std::string& where) {
  auto data = text_of(map, (field + "-data").c_str());
  if (!data.empty()) {
    auto decoded = detail::base64_decode(data);
    if (!decoded || decoded->empty()) {
      return bad(where + ": " + field + "-data is not valid base64");
    }
    return *decoded;
  }
  auto file = text_of(map, field.c_str());
  if (file.empty()) {
    return std::string{};
  }
  std::filesystem::path p{file};
  if (p.is_relative()) {
    p = std::filesystem::path{dir} / p;
  }
  std::string out;
  std::string why;
  if (!read_file(p.string(), limits::max_kube_file_bytes, out, why)) {
    return bad(where + ": " + field + " " + p.string() + ": " + why);
  }
  return out;
}

bool is_ip_v6(const std::string& host) {
  return host.find(':') != std::string::npos;
}

} // namespace

std::string kube_config::describe() const {
  return server + " from " + origin;
}

caf::error parse_server_url(const std::string& url, kube_config& cfg) {
  const std::string scheme = "https://";
  if (url.compare(0, scheme.size(), scheme) != 0) {
    return bad("server \"" + url +
               "\" is not an https:// URL (berth verifies the API server's certificate)");
  }
  auto rest = url.substr(scheme.size());
  auto slash = rest.find('/');
  auto authority = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  while (!path.empty() && path.back() == '/') {
    path.pop_back();
  }
  std::string host;
  std::string port = "443";
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) {
      return bad("server \"" + url + "\": unterminated [IPv6] host");
    }
    host = authority.substr(1, close - 1);
    auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return bad("server \"" + url + "\": junk after the [IPv6] host");
      }
      port = after.substr(1);
    }
  } else {
    auto colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string::npos) {
      port = authority.substr(colon + 1);
    }
  }
  if (host.empty() || authority.find('@') != std::string::npos) {
    return bad("server \"" + url + "\" names no host");
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) == 0 || std::stoul(port) > 65535) {
    return bad("server \"" + url + "\": bad port \"" + port + "\"");
  }
  cfg.host = host;
  cfg.port = port;
  cfg.base_path = path;
  cfg.server = scheme + (is_ip_v6(host) ? "[" + host + "]" : host) + ":" + port + path;
  return caf::none;
}

caf::expected<kube_config> in_cluster_config(const std::string& dir, const std::string& host,
                                             const std::string& port) {
  kube_config cfg;
  cfg.origin = "in-cluster (" + dir + ")";
  if (host.empty() || port.empty()) {
    return bad("in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
               "must be set (are we running in a pod? else pass --kubeconfig)");
  }
  auto url = "https://" + (is_ip_v6(host) ? "[" + host + "]" : host) + ":" + port;
  if (auto err = parse_server_url(url, cfg)) {
    return err;
  }
  std::string why;
  if (!read_file(dir + "/ca.crt", limits::max_kube_file_bytes, cfg.ca_pem, why)) {
    return bad("in-cluster configuration: " + dir + "/ca.crt: " + why +
               " (is the service account token mounted?)");
  }
  cfg.token_file = dir + "/token";
  if (auto tok = current_token(cfg); !tok) {
    return tok.error();
  }
  return cfg;
}

caf::expected<kube_config> in_cluster_config(const std::string& dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  return in_cluster_config(dir, host ? host : "", port ? port : "");
}

caf::expected<kube_config> kubeconfig_config(const std::string& path,
                                             const std::string& context) {
  std::string text;
  std::string why;
  if (!read_file(path, limits::max_kube_file_bytes, text, why)) {
    return bad("kubeconfig " + path + ": " + why);
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return bad("kubeconfig " + path + ": not valid YAML: " + e.what());
  }
  if (!root.IsMap()) {
    return bad("kubeconfig " + path + ": not a YAML map");
  }
  auto dir = std::filesystem::path{path}.parent_path().string();
  if (dir.empty()) {
    dir = ".";
  }
  auto ctx_name = context.empty() ? text_of(root, "current-context") : context;
  if (ctx_name.empty()) {
    return bad("kubeconfig " + path + ": no current-context (set one, or name a context)");
  }
  auto where = "kubeconfig " + path + " (context " + ctx_name + ")";
  auto ctx = find_named(root, "contexts", "context", ctx_name);
  if (!ctx) {
    return bad(where + ": no context named " + ctx_name + " in contexts");
  }
  auto cluster_name = text_of(ctx, "cluster");
  if (cluster_name.empty()) {
    return bad(where + ": the context has no cluster");
  }
  auto cluster = find_named(root, "clusters", "cluster", cluster_name);
  if (!cluster) {
    return bad(where + ": no cluster named " + cluster_name + " in clusters");
  }
  kube_config cfg;
  cfg.origin = where;
  auto server = text_of(cluster, "server");
  if (server.empty()) {
    return bad(where + ": cluster " + cluster_name + " has no server");
  }
  if (auto err = parse_server_url(server, cfg)) {
    return bad(where + ": cluster " + cluster_name + ": " + describe(err));
  }
  if (text_of(cluster, "insecure-skip-tls-verify") == "true") {
    return bad(where + ": cluster " + cluster_name +
               " sets insecure-skip-tls-verify; berth always verifies the API server: give "
               "certificate-authority or certificate-authority-data");
  }
  auto ca = pem_of(cluster, "certificate-authority", dir, where + ": cluster " + cluster_name);
  if (!ca) {
    return ca.error();
  }
  cfg.ca_pem = std::move(*ca);

  auto user_name = text_of(ctx, "user");
  if (user_name.empty()) {
    return bad(where + ": the context has no user");
  }
  auto user = find_named(root, "users", "user", user_name);
  if (!user) {
    return bad(where + ": no user named " + user_name + " in users");
  }
  auto user_where = where + ": user " + user_name;
  cfg.token = text_of(user, "token");
  auto token_file = text_of(user, "tokenFile");
  if (cfg.token.empty() && !token_file.empty()) {
    std::filesystem::path p{token_file};
    cfg.token_file = p.is_relative() ? (std::filesystem::path{dir} / p).string() : token_file;
  }
  auto cert = pem_of(user, "client-certificate", dir, user_where);
  if (!cert) {
    return cert.error();
  }
  auto key = pem_of(user, "client-key", dir, user_where);
  if (!key) {
    return key.error();
  }
  if (cert->empty() != key->empty()) {
    return bad(user_where + ": " +
               (cert->empty() ? "client-key needs client-certificate(-data)"
                              : "client-certificate needs client-key(-data)"));
  }
  cfg.client_cert_pem = std::move(*cert);
  cfg.client_key_pem = std::move(*key);
  if (cfg.token.empty() && cfg.token_file.empty() && cfg.client_cert_pem.empty()) {
    if (user["exec"] || user["auth-provider"]) {
      return bad(user_where + ": exec and auth-provider credentials are not supported; give "
                              "token, tokenFile or client-certificate + client-key");
    }
    return bad(user_where + ": no credentials: give token, tokenFile or client-certificate + "
                            "client-key");
  }
  if (!cfg.token_file.empty()) {
    if (auto tok = current_token(cfg); !tok) {
      return bad(user_where + ": " + describe(tok.error()));
    }
  }
  return cfg;
}

caf::expected<std::string> current_token(const kube_config& cfg) {
  if (cfg.token_file.empty()) {
    return cfg.token;
  }
  std::string text;
  std::string why;
  if (!read_file(cfg.token_file, limits::max_kube_file_bytes, text, why)) {
    return make_error(ec::failed_precondition, "token file " + cfg.token_file + ": " + why);
  }
  auto token = detail::trim(text);
  if (token.empty()) {
    return make_error(ec::failed_precondition, "token file " + cfg.token_file + " is empty");
  }
  return token;
}

} // namespace berth::kube
