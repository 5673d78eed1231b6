#pragma once

// kube_api over HTTPS: Boost.Beast on Boost.Asio SSL (OpenSSL), certificate verification
// always on (the config's CA, the server's host name or IP checked), a bearer token read per
// request (so a rotated service-account token is picked up) or a client certificate.
//
// Every call opens its own connection and runs its own io_context until the call is done or
// its deadline (`until`) passes: resolve, connect, handshake, write and each read are all
// bounded by it. Calls on one client may run on several threads at once.

#include <chrono>
#include <memory>

#include <caf/expected.hpp>

#include "core/limits.hpp"
#include "protocols/kube/kube_api.hpp"
#include "protocols/kube/kube_config.hpp"

namespace boost::asio::ssl {
class context;
}

namespace berth::kube {

/// How long one watch may run: the server is asked to end it within `window`
/// (timeoutSeconds) and given `grace` more. A watch still open then, however quiet, is a dead
/// connection: watch_attachments ends it as ec::timeout, and the caller watches again.
struct watch_bounds {
  std::chrono::seconds window = limits::kube_watch_window;
  std::chrono::seconds grace = limits::kube_watch_grace;
};

/// The HTTPS implementation of kube_api.
class kube_client : public kube_api {
public:
  /// Builds the TLS context from `cfg` (CA, client certificate and key). A PEM that does
  /// not load is ec::invalid_argument naming cfg.origin.
  static caf::expected<std::unique_ptr<kube_client>> make(kube_config cfg,
                                                          watch_bounds bounds = {});

  ~kube_client() override;

  kube_client(const kube_client&) = delete;
  kube_client& operator=(const kube_client&) = delete;

  caf::expected<node_info> get_node(const std::string& name,
                                    std::chrono::steady_clock::time_point until) override;

  caf::expected<attachment_page>
  list_attachments(const std::string& next, size_t limit,
                   std::chrono::steady_clock::time_point until) override;

  caf::expected<watch_end>
  watch_attachments(const std::string& resource_version,
                    const std::function<bool(const attachment_event&)>& on_event,
                    std::chrono::steady_clock::time_point until) override;

  /// The configuration in use.
  const kube_config& config() const {
    return cfg_;
  }

private:
  kube_client(kube_config cfg, watch_bounds bounds,
              std::unique_ptr<boost::asio::ssl::context> tls);

  /// GET `target` and read the whole body: the status and the body, or a transport error.
  struct reply {
    unsigned status = 0;
    std::string body;
  };
  caf::expected<reply> get(const std::string& target, std::chrono::steady_clock::time_point until);

  kube_config cfg_;
  watch_bounds bounds_;
  std::unique_ptr<boost::asio::ssl::context> tls_;
};

} // namespace berth::kube
