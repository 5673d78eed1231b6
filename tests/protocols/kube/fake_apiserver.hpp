#pragma once

// A stand-in for the Kubernetes API server, for tests of protocols/kube and of
// `berthd prestop`: HTTPS on 127.0.0.1 (an ephemeral port) with a CA and server
// certificate made at start(), the bearer token demanded (401 Status otherwise), Nodes,
// VolumeAttachments with resourceVersions, paged LISTs and watch streams the test drives.
//
//   fake_apiserver api;
//   api.start();
//   api.set_node("n1", {true, true, {}});
//   api.add_attachment({"va-1", "n1", "berth.csi.dev", "pv-1"});
//   auto cfg = kube::kubeconfig_config(api.kubeconfig_path());
//   ...
//   api.delete_attachment("va-1"); // open watches get DELETED
//
// Every method is thread-safe; the server runs on its own threads (one per connection).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protocols/kube/kube_api.hpp"
#include "tests/protocols/kube/test_certs.hpp"

namespace berth::test {

/// How a too-old resourceVersion is refused to a new watch.
enum class gone_style {
  error_event, ///< HTTP 200, then an ERROR event carrying a 410 Status (what kube-apiserver does)
  http_status, ///< HTTP 410 with a Status body
};

/// The stand-in API server.
class fake_apiserver {
public:
  struct options {
    std::string token = "fake-token-3f9c2a7d51e8"; ///< the bearer token it demands
    std::vector<std::string> server_sans = {"IP:127.0.0.1", "DNS:localhost"}; ///< its certificate's names
    /// Asks for client certificates: one its CA signed authenticates without a token.
    bool client_certs = false;
  };

  fake_apiserver();
  explicit fake_apiserver(options opts);
  /// Calls stop().
  ~fake_apiserver();

  fake_apiserver(const fake_apiserver&) = delete;
  fake_apiserver& operator=(const fake_apiserver&) = delete;

  // -- life cycle ----------------------------------------------------------------------

  /// Makes the certificates, listens on 127.0.0.1:0 and writes kubeconfig_path() and the
  /// service-account directory. Throws std::runtime_error on failure.
  void start();

  /// Ends every connection (open watches end abruptly) and joins the server's threads.
  void stop();

  // -- where it is ---------------------------------------------------------------------

  /// The port it listens on (after start()).
  unsigned short port() const;
  /// "https://127.0.0.1:PORT".
  std::string server_url() const;
  /// The token it currently accepts.
  std::string token() const;
  /// Its CA's certificate (PEM).
  const std::string& ca_pem() const;
  /// A kubeconfig pointing at it: certificate-authority-data and the token.
  const std::string& kubeconfig_path() const;
  /// A directory laid out like /var/run/secrets/kubernetes.io/serviceaccount: token, ca.crt.
  std::string service_account_dir() const;
  /// A client certificate for `user` signed by its CA (for options::client_certs).
  cert_pair issue_client_cert(const std::string& user) const;
  /// Its temporary directory (removed when it is destroyed).
  const std::string& dir() const;

  // -- what it serves ------------------------------------------------------------------

  /// Creates or replaces Node `name` (node.found is ignored).
  void set_node(const std::string& name, const kube::node_info& node);
  /// Removes Node `name`: a GET answers 404 Status.
  void remove_node(const std::string& name);

  /// Creates (ADDED) or replaces (MODIFIED) a VolumeAttachment; returns its resourceVersion.
  std::string add_attachment(const kube::attachment& a);
  /// Deletes a VolumeAttachment (DELETED); returns the new resourceVersion, "" if there was none.
  std::string delete_attachment(const std::string& name);
  /// The newest resourceVersion.
  std::string resource_version() const;

  /// Sends a BOOKMARK at the newest resourceVersion to every open watch that allows bookmarks.
  void send_bookmark();
  /// Ends every open watch stream cleanly (the chunked body's last chunk): the client sees `closed`.
  void close_watches();
  /// Ends every open watch stream abruptly (the TCP connection is shut, no last chunk).
  void drop_watches();
  /// Makes every resourceVersion up to now too old: open watches get an ERROR event with a
  /// 410 Status and end; a later watch from an older version is refused as `style` says,
  /// and a LIST continuing an older page answers 410 Status.
  void expire_resource_versions(gone_style style = gone_style::error_event);

  /// Sends `header` as a Warning header with every answer from now on ("" for none).
  void set_warning(const std::string& header);
  /// From now on accepts only `token` (rotation tests).
  void set_token(const std::string& token);
  /// While true, accepts TCP connections but never answers (not even the TLS handshake).
  void set_stalled(bool stalled);
  /// While true, a new watch stream sends its 200 header and then nothing, ever: it ignores
  /// timeoutSeconds and every event, as a connection whose far end vanished (half-open) does.
  /// It ends only at stop() or drop_watches().
  void set_half_open_watches(bool half_open);

  // -- what it saw ---------------------------------------------------------------------

  /// Requests answered, by kind.
  struct counts {
    size_t node_gets = 0;
    size_t lists = 0;
    size_t watches = 0;
    size_t unauthorized = 0; ///< answered 401
    size_t by_certificate = 0; ///< authenticated by a client certificate
    long last_watch_timeout_s = -1; ///< the timeoutSeconds of the last watch (-1: none given)
    size_t connections = 0; ///< TCP connections accepted
  };
  counts requests() const;
  /// Closes every connection that waits for its next request, as a real server does with
  /// one idle for its IdleTimeout (90 s); returns once each of their threads has ended.
  /// First waits (up to 10 s) until every open connection waits so: use it with no watch
  /// open.
  void close_idle_connections();
  /// Connections open now.
  size_t open_connections() const;
  /// Watch streams open now.
  size_t open_watches() const;
  /// Waits until at least `n` watch streams are open; false after `timeout`.
  bool wait_for_watches(size_t n, std::chrono::milliseconds timeout) const;
  /// Waits until `seen(requests(), open_watches())` holds; false after `timeout`.
  bool wait_until(const std::function<bool(const counts&, size_t)>& seen,
                  std::chrono::milliseconds timeout) const;

private:
  struct watcher;
  struct stored {
    kube::attachment a;
    uint64_t rv = 0;
  };
  struct event_rec {
    uint64_t rv = 0;
    std::string line; ///< the whole watch event JSON
  };
  struct request_info;

  void accept_loop();
  void serve(int fd);
  /// The body and status of a GET that is not a watch.
  std::string answer(const request_info& req, unsigned& status);
  void push_locked(const std::string& line, uint64_t rv);
  void write_files();

  options opts_;
  cert_pair ca_;
  cert_pair server_;
  std::string dir_;
  std::string kubeconfig_;
  struct io;
  std::unique_ptr<io> io_;
  std::thread acceptor_;

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  bool started_ = false;
  bool stopping_ = false;
  bool stalled_ = false;
  bool half_open_watches_ = false;
  std::string token_;
  std::map<std::string, kube::node_info> nodes_;
  std::map<std::string, stored> attachments_;
  uint64_t rv_ = 1000;
  uint64_t expired_below_ = 0;
  gone_style gone_ = gone_style::error_event;
  std::vector<event_rec> log_;
  std::set<watcher*> watchers_;
  std::set<int> fds_;
  std::set<int> idle_fds_; ///< the connections waiting for their next request
  std::string warning_;    ///< a Warning header for every answer ("" for none)
  std::vector<std::thread> connections_;
  counts counts_;
};

} // namespace berth::test
