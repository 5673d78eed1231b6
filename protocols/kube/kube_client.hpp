#pragma once

// kube_api over HTTPS: Boost.Beast on Boost.Asio SSL (OpenSSL), certificate verification
// always on (the config's CA, the server's host name or IP checked), a bearer token read per
// request (so a rotated service-account token is picked up) or a client certificate.
//
// Every call opens its own connection and runs its own io_context until the call is done or
// its deadline (`until`) passes: resolve, connect, handshake, write and each read are all
// bounded by it. Calls on one client may run on several threads at once.

#include <memory>

#include <caf/expected.hpp>

#include "protocols/kube/kube_api.hpp"
#include "protocols/kube/kube_config.hpp"

namespace boost::asio::ssl {
class context;
}

namespace berth::kube {

/// The HTTPS implementation of kube_api.
class kube_client : public kube_api {
public:
  /// Builds the TLS context from `cfg` (CA, client certificate and key). A PEM that does
  /// not load is ec::invalid_argument naming cfg.origin.
  static caf::expected<std::unique_ptr<kube_client>> make(kube_config cfg);

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
  kube_client(kube_config cfg, std::unique_ptr<boost::asio::ssl::context> tls);

  /// GET `target` and read the whole body: the status and the body, or a transport error.
  struct reply {
    unsigned status = 0;
    std::string body;
  };
  caf::expected<reply> get(const std::string& target, std::chrono::steady_clock::time_point until);

  kube_config cfg_;
  std::unique_ptr<boost::asio::ssl::context> tls_;
};

} // namespace berth::kube
