// The stand-in API server's connections: TLS, the request parser and router, and watch
// streams. Over 400 lines because serve() reads one request and routes it the way
// kube-apiserver does (LIST with paging, WATCH from a resourceVersion with bookmarks and
// 410, GET, the token check) in one place, so its wire behaviour can be read top to
// bottom; the JSON it answers with is kube_shapes.cpp. What the test drives and reads (the
// objects, closing and expiring watches, the counts and the waits on them) stays here too:
// it changes the watchers' state, whose type only this file knows.

#include "tests/protocols/kube/fake_apiserver.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <openssl/ssl.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "protocols/kube/detail/text.hpp"
#include "tests/protocols/kube/kube_shapes.hpp"

namespace berth::test {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

using namespace kube_shapes;

// -- the parts that need Asio --------------------------------------------------------------

struct fake_apiserver::io {
  asio::io_context ctx;
  ssl::context tls{ssl::context::tls_server};
  tcp::acceptor acceptor{ctx};
  unsigned short port = 0;
};

struct fake_apiserver::request_info {
  std::string path;
  std::map<std::string, std::string> query;
  std::string authorization;

  std::string param(const std::string& key) const {
    auto it = query.find(key);
    return it == query.end() ? "" : it->second;
  }
  bool has(const std::string& key) const {
    return query.count(key) != 0;
  }
};

/// One open watch stream: the lines to send, and how it should end.
struct fake_apiserver::watcher {
  std::deque<std::string> lines;
  bool bookmarks = false;
  bool end = false;   ///< send the last chunk after `lines`
  bool abort = false; ///< drop the connection now
};

fake_apiserver::fake_apiserver() : fake_apiserver(options{}) {
}

fake_apiserver::fake_apiserver(options opts) : opts_(std::move(opts)), io_(std::make_unique<io>()) {
  token_ = opts_.token;
  std::string tmpl = "/tmp/berth-kube-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw std::runtime_error("fake_apiserver: mkdtemp failed");
  }
  dir_ = tmpl;
  kubeconfig_ = dir_ + "/kubeconfig";
}

fake_apiserver::~fake_apiserver() {
  stop();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void fake_apiserver::start() {
  ca_ = make_ca("fake-apiserver-ca");
  server_ = issue_cert(ca_, "kube-apiserver", opts_.server_sans);
  io_->tls.use_certificate_chain(asio::buffer(server_.cert_pem));
  io_->tls.use_private_key(asio::buffer(server_.key_pem), ssl::context::pem);
  if (opts_.client_certs) {
    io_->tls.add_certificate_authority(asio::buffer(ca_.cert_pem));
    io_->tls.set_verify_mode(ssl::verify_peer);
  }
  tcp::endpoint ep{asio::ip::make_address("127.0.0.1"), 0};
  io_->acceptor.open(ep.protocol());
  io_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  io_->acceptor.bind(ep);
  io_->acceptor.listen();
  io_->port = io_->acceptor.local_endpoint().port();
  write_files();
  {
    std::lock_guard<std::mutex> lk{mutex_};
    started_ = true;
  }
  acceptor_ = std::thread([this] { accept_loop(); });
}

void fake_apiserver::write_files() {
  auto sa = service_account_dir();
  std::filesystem::create_directories(sa);
  std::ofstream{sa + "/token"} << token_;
  std::ofstream{sa + "/ca.crt"} << ca_.cert_pem;
  std::ofstream out{kubeconfig_};
  out << "apiVersion: v1\nkind: Config\n"
      << "clusters:\n- name: fake\n  cluster:\n    server: " << server_url() << "\n"
      << "    certificate-authority-data: " << kube::detail::base64_encode(ca_.cert_pem) << "\n"
      << "users:\n- name: fake-user\n  user:\n    token: " << token_ << "\n"
      << "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake-user\n"
      << "current-context: fake\n";
}

void fake_apiserver::stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lk{mutex_};
    if (!started_ || stopping_) {
      return;
    }
    stopping_ = true;
    ::shutdown(io_->acceptor.native_handle(), SHUT_RDWR);
    for (int fd : fds_) {
      ::shutdown(fd, SHUT_RDWR);
    }
  }
  changed_.notify_all();
  if (acceptor_.joinable()) {
    acceptor_.join();
  }
  {
    std::lock_guard<std::mutex> lk{mutex_};
    threads.swap(connections_);
  }
  for (auto& t : threads) {
    t.join();
  }
  error_code ignored;
  io_->acceptor.close(ignored);
}

void fake_apiserver::accept_loop() {
  for (;;) {
    int fd = ::accept(io_->acceptor.native_handle(), nullptr, nullptr);
    std::lock_guard<std::mutex> lk{mutex_};
    if (stopping_) {
      if (fd >= 0) {
        ::close(fd);
      }
      return;
    }
    if (fd < 0) {
      continue;
    }
    fds_.insert(fd);
    ++counts_.connections;
    changed_.notify_all();
    connections_.emplace_back([this, fd] { serve(fd); });
  }
}

void fake_apiserver::serve(int fd) {
  tcp::socket socket{io_->ctx, tcp::v4(), fd};
  ssl::stream<tcp::socket&> stream{socket, io_->tls};
  auto finish = [&] {
    std::lock_guard<std::mutex> lk{mutex_};
    fds_.erase(fd);
    idle_fds_.erase(fd);
    changed_.notify_all();
    // The socket closes when it goes out of scope, after fd left fds_ (no reuse race).
  };
  {
    std::unique_lock<std::mutex> lk{mutex_};
    changed_.wait(lk, [this] { return !stalled_ || stopping_; });
    if (stopping_) {
      lk.unlock();
      finish();
      return;
    }
  }
  error_code err;
  stream.handshake(ssl::stream_base::server, err);
  bool by_certificate = false;
  if (!err && opts_.client_certs) {
    X509* peer = SSL_get1_peer_certificate(stream.native_handle());
    by_certificate = peer != nullptr && SSL_get_verify_result(stream.native_handle()) == X509_V_OK;
    X509_free(peer);
  }
  boost::beast::flat_buffer buffer;
  while (!err) {
    http::request<http::string_body> req;
    {
      std::lock_guard<std::mutex> lk{mutex_};
      idle_fds_.insert(fd);
      changed_.notify_all();
    }
    http::read(stream, buffer, req, err);
    {
      std::lock_guard<std::mutex> lk{mutex_};
      idle_fds_.erase(fd);
    }
    if (err) {
      break;
    }
    request_info info;
    std::string target{req.target()};
    auto q = target.find('?');
    info.path = target.substr(0, q);
    if (q != std::string::npos) {
      std::string rest = target.substr(q + 1);
      size_t pos = 0;
      while (pos <= rest.size()) {
        auto amp = rest.find('&', pos);
        auto part = rest.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
        auto eq = part.find('=');
        if (!part.empty()) {
          info.query[url_decode(part.substr(0, eq))] =
            eq == std::string::npos ? "" : url_decode(part.substr(eq + 1));
        }
        if (amp == std::string::npos) {
          break;
        }
        pos = amp + 1;
      }
    }
    info.authorization = std::string{req[http::field::authorization]};

    auto respond = [&](unsigned status, const std::string& body) {
      http::response<http::string_body> res{static_cast<http::status>(status), 11};
      res.set(http::field::content_type, "application/json");
      {
        std::lock_guard<std::mutex> lk{mutex_};
        if (!warning_.empty()) {
          res.set(http::field::warning, warning_);
        }
      }
      res.body() = body;
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      http::write(stream, res, err);
    };

    bool authorized;
    {
      std::lock_guard<std::mutex> lk{mutex_};
      authorized = by_certificate || info.authorization == "Bearer " + token_;
      if (by_certificate) {
        ++counts_.by_certificate;
      }
      if (!authorized) {
        ++counts_.unauthorized;
      }
    }
    changed_.notify_all();
    if (!authorized) {
      respond(401, status_json(401, "Unauthorized", "Unauthorized"));
    } else if (info.path == "/apis/storage.k8s.io/v1/volumeattachments" &&
               (info.param("watch") == "1" || info.param("watch") == "true")) {
      // -- a watch stream ---------------------------------------------------------------
      watcher w;
      w.bookmarks = info.param("allowWatchBookmarks") == "true";
      auto rv = info.param("resourceVersion");
      auto timeout = std::chrono::seconds{is_number(info.param("timeoutSeconds"))
                                            ? std::stoll(info.param("timeoutSeconds"))
                                            : 1800};
      auto until = std::chrono::steady_clock::now() + timeout;
      bool refuse_http = false;
      bool half_open = false;
      {
        std::lock_guard<std::mutex> lk{mutex_};
        ++counts_.watches;
        counts_.last_watch_timeout_s =
          is_number(info.param("timeoutSeconds")) ? std::stol(info.param("timeoutSeconds")) : -1;
        half_open = half_open_watches_;
        if (half_open) {
          until = std::chrono::steady_clock::now() + std::chrono::hours{24};
        }
        if (!rv.empty() && rv != "0" && !is_number(rv)) {
          refuse_http = true;
        } else if (!rv.empty() && rv != "0" && std::stoull(rv) < expired_below_) {
          auto msg = "too old resource version: " + rv + " (" + std::to_string(expired_below_) + ")";
          if (gone_ == gone_style::http_status) {
            refuse_http = true;
          } else {
            w.lines.push_back(error_event_json(410, "Expired", msg));
            w.end = true;
          }
        } else if (rv.empty() || rv == "0") {
          for (const auto& [name, s] : attachments_) {
            w.lines.push_back(event_json("ADDED", s.a, s.rv));
          }
        } else {
          auto from = std::stoull(rv);
          for (const auto& e : log_) {
            if (e.rv > from) {
              w.lines.push_back(e.line);
            }
          }
        }
        if (!refuse_http && !w.end) {
          watchers_.insert(&w);
        }
      }
      changed_.notify_all();
      if (refuse_http) {
        if (!is_number(rv)) {
          respond(400, status_json(400, "BadRequest", "invalid resourceVersion " + rv));
        } else {
          respond(410, status_json(410, "Expired", "too old resource version: " + rv));
        }
        break;
      }
      http::response<http::empty_body> res{http::status::ok, 11};
      res.set(http::field::content_type, "application/json");
      res.chunked(true);
      http::response_serializer<http::empty_body> sr{res};
      http::write_header(stream, sr, err);
      bool clean = true;
      while (!err) {
        std::deque<std::string> lines;
        bool end = false;
        {
          std::unique_lock<std::mutex> lk{mutex_};
          changed_.wait_until(lk, until, [&] {
            return !w.lines.empty() || w.end || w.abort || stopping_;
          });
          lines.swap(w.lines);
          end = w.end || std::chrono::steady_clock::now() >= until;
          if (half_open) {
            lines.clear(); // what the far end sends never arrives
            end = false;
          }
          if (w.abort || stopping_) {
            clean = false;
            end = true;
            lines.clear();
          }
        }
        for (const auto& line : lines) {
          auto text = line + "\n";
          asio::write(stream, http::make_chunk(asio::buffer(text)), err);
          if (err) {
            break;
          }
        }
        if (end) {
          break;
        }
      }
      {
        std::lock_guard<std::mutex> lk{mutex_};
        watchers_.erase(&w);
      }
      changed_.notify_all();
      if (clean && !err) {
        asio::write(stream, http::make_chunk_last(), err);
      } else {
        ::shutdown(fd, SHUT_RDWR);
      }
      break;
    } else {
      unsigned status = 200;
      auto body = answer(info, status);
      respond(status, body);
    }
    if (!req.keep_alive()) {
      break;
    }
  }
  finish();
}

std::string fake_apiserver::answer(const request_info& req, unsigned& status) {
  std::lock_guard<std::mutex> lk{mutex_};
  const std::string nodes = "/api/v1/nodes/";
  if (req.path.compare(0, nodes.size(), nodes) == 0) {
    ++counts_.node_gets;
    changed_.notify_all();
    auto name = url_decode(req.path.substr(nodes.size()));
    auto it = nodes_.find(name);
    if (it == nodes_.end()) {
      status = 404;
      return status_json(404, "NotFound", "nodes \"" + name + "\" not found");
    }
    return node_json(name, it->second);
  }
  if (req.path != "/apis/storage.k8s.io/v1/volumeattachments") {
    status = 404;
    return status_json(404, "NotFound", "the server could not find the requested resource");
  }
  ++counts_.lists;
  changed_.notify_all();
  uint64_t list_rv = rv_;
  std::string after;
  if (auto token = req.param("continue"); !token.empty()) {
    auto decoded = kube::detail::base64_decode(token);
    auto colon = decoded ? decoded->find(':') : std::string::npos;
    if (colon == std::string::npos || !is_number(decoded->substr(0, colon))) {
      status = 400;
      return status_json(400, "BadRequest", "invalid continue token");
    }
    list_rv = std::stoull(decoded->substr(0, colon));
    after = decoded->substr(colon + 1);
    if (list_rv < expired_below_) {
      status = 410;
      return status_json(410, "Expired",
                         "The provided continue parameter is too old to display a consistent "
                         "list result. You can start a new list without the continue parameter.");
    }
  }
  size_t limit = is_number(req.param("limit")) ? std::stoull(req.param("limit")) : 0;
  rapidjson::StringBuffer buf;
  writer w{buf};
  w.StartObject();
  str(w, "kind", "VolumeAttachmentList");
  str(w, "apiVersion", "storage.k8s.io/v1");
  std::vector<const stored*> items;
  for (auto it = after.empty() ? attachments_.begin() : attachments_.upper_bound(after);
       it != attachments_.end(); ++it) {
    items.push_back(&it->second);
  }
  size_t shown = limit == 0 ? items.size() : std::min(limit, items.size());
  w.Key("metadata");
  w.StartObject();
  str(w, "resourceVersion", std::to_string(list_rv));
  if (shown < items.size()) {
    str(w, "continue",
        kube::detail::base64_encode(std::to_string(list_rv) + ":" + items[shown - 1]->a.name));
    w.Key("remainingItemCount");
    w.Uint64(items.size() - shown);
  }
  w.EndObject();
  w.Key("items");
  w.StartArray();
  for (size_t i = 0; i < shown; ++i) {
    attachment_object(w, items[i]->a, items[i]->rv);
  }
  w.EndArray();
  w.EndObject();
  return buf.GetString();
}

// -- what the test drives ------------------------------------------------------------------

void fake_apiserver::push_locked(const std::string& line, uint64_t rv) {
  log_.push_back({rv, line});
  for (auto* w : watchers_) {
    w->lines.push_back(line);
  }
}

void fake_apiserver::set_node(const std::string& name, const kube::node_info& node) {
  std::lock_guard<std::mutex> lk{mutex_};
  nodes_[name] = node;
}

void fake_apiserver::remove_node(const std::string& name) {
  std::lock_guard<std::mutex> lk{mutex_};
  nodes_.erase(name);
}

std::string fake_apiserver::add_attachment(const kube::attachment& a) {
  std::string rv;
  {
    std::lock_guard<std::mutex> lk{mutex_};
    bool exists = attachments_.count(a.name) != 0;
    ++rv_;
    attachments_[a.name] = stored{a, rv_};
    push_locked(event_json(exists ? "MODIFIED" : "ADDED", a, rv_), rv_);
    rv = std::to_string(rv_);
  }
  changed_.notify_all();
  return rv;
}

std::string fake_apiserver::delete_attachment(const std::string& name) {
  std::string rv;
  {
    std::lock_guard<std::mutex> lk{mutex_};
    auto it = attachments_.find(name);
    if (it == attachments_.end()) {
      return "";
    }
    ++rv_;
    push_locked(event_json("DELETED", it->second.a, rv_), rv_);
    attachments_.erase(it);
    rv = std::to_string(rv_);
  }
  changed_.notify_all();
  return rv;
}

void fake_apiserver::set_warning(const std::string& header) {
  std::lock_guard<std::mutex> lk{mutex_};
  warning_ = header;
}

void fake_apiserver::close_idle_connections() {
  std::unique_lock<std::mutex> lk{mutex_};
  // A connection whose answer was just written turns idle a moment later, when its thread
  // waits for the next request; closing before that left it open for the client to reuse.
  changed_.wait_for(lk, std::chrono::seconds(10), [&] { return idle_fds_.size() == fds_.size(); });
  auto closing = idle_fds_;
  for (int fd : closing) {
    ::shutdown(fd, SHUT_RDWR);
  }
  changed_.wait(lk, [&] {
    for (int fd : closing) {
      if (fds_.count(fd)) {
        return false;
      }
    }
    return true;
  });
}

size_t fake_apiserver::open_connections() const {
  std::lock_guard<std::mutex> lk{mutex_};
  return fds_.size();
}

std::string fake_apiserver::resource_version() const {
  std::lock_guard<std::mutex> lk{mutex_};
  return std::to_string(rv_);
}

void fake_apiserver::send_bookmark() {
  {
    std::lock_guard<std::mutex> lk{mutex_};
    for (auto* w : watchers_) {
      if (w->bookmarks) {
        w->lines.push_back(bookmark_json(rv_));
      }
    }
  }
  changed_.notify_all();
}

void fake_apiserver::close_watches() {
  {
    std::lock_guard<std::mutex> lk{mutex_};
    for (auto* w : watchers_) {
      w->end = true;
    }
  }
  changed_.notify_all();
}

void fake_apiserver::drop_watches() {
  {
    std::lock_guard<std::mutex> lk{mutex_};
    for (auto* w : watchers_) {
      w->abort = true;
    }
  }
  changed_.notify_all();
}

void fake_apiserver::expire_resource_versions(gone_style style) {
  {
    std::lock_guard<std::mutex> lk{mutex_};
    ++rv_; // a compaction: every version a client knows is now older than this
    expired_below_ = rv_;
    gone_ = style;
    for (auto* w : watchers_) {
      w->lines.push_back(error_event_json(410, "Expired", "too old resource version"));
      w->end = true;
    }
  }
  changed_.notify_all();
}

void fake_apiserver::set_token(const std::string& token) {
  std::lock_guard<std::mutex> lk{mutex_};
  token_ = token;
}

void fake_apiserver::set_stalled(bool stalled) {
  {
    std::lock_guard<std::mutex> lk{mutex_};
    stalled_ = stalled;
  }
  changed_.notify_all();
}

void fake_apiserver::set_half_open_watches(bool half_open) {
  std::lock_guard<std::mutex> lk{mutex_};
  half_open_watches_ = half_open;
}

// -- where it is, what it saw --------------------------------------------------------------

unsigned short fake_apiserver::port() const {
  return io_->port;
}

std::string fake_apiserver::server_url() const {
  return "https://127.0.0.1:" + std::to_string(io_->port);
}

std::string fake_apiserver::token() const {
  std::lock_guard<std::mutex> lk{mutex_};
  return token_;
}

const std::string& fake_apiserver::ca_pem() const {
  return ca_.cert_pem;
}

const std::string& fake_apiserver::kubeconfig_path() const {
  return kubeconfig_;
}

std::string fake_apiserver::service_account_dir() const {
  return dir_ + "/serviceaccount";
}

cert_pair fake_apiserver::issue_client_cert(const std::string& user) const {
  return issue_cert(ca_, user, {});
}

const std::string& fake_apiserver::dir() const {
  return dir_;
}

fake_apiserver::counts fake_apiserver::requests() const {
  std::lock_guard<std::mutex> lk{mutex_};
  return counts_;
}

size_t fake_apiserver::open_watches() const {
  std::lock_guard<std::mutex> lk{mutex_};
  return watchers_.size();
}

bool fake_apiserver::wait_for_watches(size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lk{mutex_};
  return changed_.wait_for(lk, timeout, [&] { return watchers_.size() >= n; });
}

bool fake_apiserver::wait_until(const std::function<bool(const counts&, size_t)>& seen,
                                std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lk{mutex_};
  return changed_.wait_for(lk, timeout, [&] { return seen(counts_, watchers_.size()); });
}

} // namespace berth::test
