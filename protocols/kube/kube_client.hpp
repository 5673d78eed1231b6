#pragma once

// kube_api over HTTPS: Boost.Beast on Boost.Asio SSL (OpenSSL), certificate verification
// always on (the config's CA, the server's host name or IP checked), a bearer token read per
// request (so a rotated service-account token is picked up) or a client certificate.
//
// A call takes a connection kept alive by an earlier one (HTTP/1.1, as the API server
// offers), or dials a new one, and runs its io_context until the call is done or its
// deadline (`until`) passes: resolve, connect, handshake, write and each read are all
// bounded by it. A connection goes back to the pool (at most limits::kube_idle_connections)
// only after an answer read whole with keep-alive: after any error it is closed, and the
// next call dials again. A watch has a connection of its own. Calls on one client may run
// on several threads at once.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/limits.hpp"
#include "protocols/kube/kube_api.hpp"
#include "protocols/kube/kube_config.hpp"
#include "protocols/kube/object_api.hpp"

namespace boost::asio::ssl {
class context;
}

namespace berth::kube {

struct api_status;

namespace detail {
class connection_pool;
struct request_line;
struct session;
} // namespace detail

/// How long one watch may run: the server is asked to end it within `window`
/// (timeoutSeconds) and given `grace` more. A watch still open then, however quiet, is a dead
/// connection: watch_attachments ends it as ec::timeout, and the caller watches again.
struct watch_bounds {
  std::chrono::seconds window = limits::kube_watch_window;
  std::chrono::seconds grace = limits::kube_watch_grace;
};

/// The HTTPS implementation of kube_api and object_api.
class kube_client : public kube_api, public object_api {
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

  caf::expected<std::string> get_object(const resource_ref& kind, const std::string& name,
                                        std::chrono::steady_clock::time_point until) override;
  caf::expected<object_page> list_objects(const resource_ref& kind, const list_query& q,
                                          std::chrono::steady_clock::time_point until) override;
  caf::expected<std::string> create_object(const resource_ref& kind, const std::string& json,
                                           std::chrono::steady_clock::time_point until) override;
  caf::expected<std::string> merge_patch(const resource_ref& kind, const std::string& name,
                                         const std::string& subresource, const std::string& patch,
                                         std::chrono::steady_clock::time_point until) override;
  caf::expected<std::string> delete_object(const resource_ref& kind, const std::string& name,
                                           std::chrono::steady_clock::time_point until) override;
  caf::expected<watch_end>
  watch_objects(const resource_ref& kind, const list_query& q, const std::string& resource_version,
                const std::function<bool(const object_event&)>& on_event,
                std::chrono::steady_clock::time_point until) override;
  void cancel_calls() override;

  /// The configuration in use.
  const kube_config& config() const {
    return cfg_;
  }

  /// How many connections are idle in the pool now.
  size_t idle_connections() const;

private:
  kube_client(kube_config cfg, watch_bounds bounds,
              std::unique_ptr<boost::asio::ssl::context> tls);

  /// GET `target` and read the whole body: the status and the body, or a transport error.
  struct reply {
    unsigned status = 0;
    std::string body;
  };
  caf::expected<reply> get(const std::string& target, std::chrono::steady_clock::time_point until);

  /// One request and its whole answer; a non-2xx status is an error (detail::status_error).
  caf::expected<reply> call(const detail::request_line& line,
                            std::chrono::steady_clock::time_point until);

  /// Handles one line of a watch stream (`what` names the watch in errors, `token` is to be
  /// redacted from them): nullopt to go on, else how the watch ends.
  using line_handler = std::function<std::optional<caf::expected<watch_end>>(
    const std::string& line, const std::string& what, const std::string& token)>;

  /// WATCH `target_with_query` (it holds "?watch=1" and any selectors) from
  /// `resource_version`, bounded as watch_bounds says, each line to `handle_line`.
  caf::expected<watch_end> watch_lines(const std::string& target_with_query,
                                       const std::string& resource_version,
                                       const std::string& what_prefix,
                                       std::chrono::steady_clock::time_point until,
                                       const line_handler& handle_line);

  /// How an ERROR event ends a watch: gone for 410, else an error naming the Status.
  caf::expected<watch_end> watch_error(const api_status& status, const std::string& what,
                                       const std::string& token) const;

  /// What one decoded event of type `type` does to a watch: an ERROR ends it (watch_error),
  /// a type this client does not know is skipped, and any other goes to `deliver`, whose
  /// false stops the watch. nullopt to go on.
  std::optional<caf::expected<watch_end>> after_event(const std::string& type, const api_status& status,
                                                      const std::string& what, const std::string& token,
                                                      const std::function<bool()>& deliver) const;

  /// Logs each warning the server sent with an answer (a `Warning` header: a field it
  /// pruned, a deprecated API), once per text.
  void note_warnings(const std::vector<std::string>& texts, const std::string& what);

  /// Keeps `s` among the calls cancel_calls ends, while it lives; an error once cancelled.
  class live_call;
  caf::error enter(detail::session& s);
  void leave(detail::session& s);

  kube_config cfg_;
  watch_bounds bounds_;
  std::unique_ptr<boost::asio::ssl::context> tls_;
  std::unique_ptr<detail::connection_pool> pool_;
  std::mutex warned_mu_;
  std::set<std::string> warned_; ///< the warnings logged, at most limits::kube_warnings_kept
  std::mutex live_mu_;
  std::set<detail::session*> live_; ///< the calls in progress
  bool cancelled_ = false;
};

} // namespace berth::kube
