#include "protocols/http/detail/http_listener.hpp"

// One connection (http_session) and the accept loop, written once for every stream
// protocol the servers use: unix sockets (Docker plugin, admin API) and TCP (metrics).

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <type_traits>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include "core/json_text.hpp"
#include "protocols/http/detail/stream_handover.hpp"

namespace berth::detail {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

namespace {

/// Errors the transport answers itself are written as {"Err":...} (plugin_error_body),
/// the shape Docker reads.
constexpr const char* json_type = "application/json";

} // namespace

// -- session -----------------------------------------------------------------

/// One connection: reads a request, hands it to the handler, writes the reply
/// when it comes, repeats while keep-alive.
template <class Protocol>
class http_session : public std::enable_shared_from_this<http_session<Protocol>> {
public:
  using socket_type = typename Protocol::socket;
  using std::enable_shared_from_this<http_session<Protocol>>::shared_from_this;

  http_session(socket_type socket, std::shared_ptr<http_listener<Protocol>> owner)
    : socket_(std::move(socket)), owner_(std::move(owner)), timer_(socket_.get_executor()) {
    ++owner_->connections;
  }

  ~http_session() {
    owner_->session_closed();
  }

  void start() {
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->read_next(); });
  }

  /// Posts a response onto this session's strand (from any thread).
  void post_reply(unsigned status, std::string content_type, std::string body) {
    asio::post(socket_.get_executor(),
               [self = shared_from_this(), status, content_type = std::move(content_type),
                body = std::move(body)]() mutable {
                 self->write(status, std::move(content_type), std::move(body), true);
               });
  }

private:
  /// Waits for the next request: at most the idle timeout for its first byte, then
  /// at most the request deadline for all of it.
  void read_next() {
    parser_.emplace();
    parser_->body_limit(static_cast<std::uint64_t>(owner_->body_limit));
    if (buffer_.size() > 0) {
      read_request(); // a pipelined request has begun already
      return;
    }
    arm(owner_->limits.idle_timeout, "sent no request");
    socket_.async_wait(socket_type::wait_read, [self = shared_from_this()](error_code err) {
      if (err) {
        self->disarm();
        self->close();
        return;
      }
      self->read_request();
    });
  }

  void read_request() {
    arm(owner_->limits.request_deadline, "sent no complete request");
    if (!owner_->stream_route) {
      read_body();
      return;
    }
    // A stream's body has no limit: it is checked after the header, for the others.
    parser_->body_limit(boost::none);
    http::async_read_header(socket_, buffer_, *parser_,
                            [self = shared_from_this()](error_code err, size_t) {
                              self->on_header(err);
                            });
  }

  /// The rest of the request, within the deadline armed for its whole.
  void read_body() {
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](error_code err, size_t) { self->on_read(err); });
  }

  void on_header(error_code err) {
    if (err) {
      disarm();
      on_read_error(err);
      return;
    }
    const auto& req = parser_->get();
    if (owner_->stream_route(std::string{req.method_string()}, std::string{req.target()})) {
      hand_over();
      return;
    }
    // What the parser checks at the header when it has its limit (a chunked body is
    // checked as it arrives).
    parser_->body_limit(static_cast<std::uint64_t>(owner_->body_limit));
    if (auto length = parser_->content_length(); length && *length > owner_->body_limit) {
      disarm();
      on_read_error(http::error::body_limit);
      return;
    }
    read_body();
  }

  /// Gives the connection to the listener's stream taker: it reads the rest of the
  /// request and answers on a thread of its own, for as long as the stream takes.
  void hand_over() {
    disarm();
    error_code err;
    auto r = take_stream(socket_, *parser_, buffer_, err);
    if (err) {
      spdlog::warn("{}: cannot hand over the stream of {} {}: {}", owner_->name, r.method,
                   r.target, err.message());
      close();
      return;
    }
    const int fd = r.fd;
    try {
      owner_->stream_take(std::move(r));
    } catch (const std::exception& e) {
      spdlog::error("{}: stream handler failed: {}", owner_->name, e.what());
      ::close(fd);
    }
  }

  /// Closes the connection unless disarm() comes first; `why` goes into the log.
  void arm(std::chrono::milliseconds limit, const char* why) {
    auto gen = ++timer_gen_;
    timer_.expires_after(limit);
    timer_.async_wait([self = shared_from_this(), gen, limit, why](error_code err) {
      if (err || gen != self->timer_gen_) {
        return; // cancelled, or re-armed since
      }
      spdlog::info("{}: closing a connection that {} within {} ms", self->owner_->name, why,
                   limit.count());
      self->close();
    });
  }

  void disarm() {
    ++timer_gen_;
    timer_.cancel();
  }

  void on_read(error_code err) {
    disarm();
    if (err) {
      on_read_error(err);
      return;
    }
    auto req = parser_->release();
    keep_alive_ = req.keep_alive();
    version_ = req.version();
    ++owner_->in_flight;
    from_ = caller::tracked(caller::clock::time_point::max(), peer());
    answering_ = false;
    watch_peer(from_);
    auto pending = std::make_shared<pending_reply>(shared_from_this());
    reply_fn reply = [pending](unsigned status, std::string content_type, std::string body) {
      pending->send(status, std::move(content_type), std::move(body));
    };
    try {
      owner_->handler(std::string{req.method_string()}, std::string{req.target()},
                      std::move(req.body()), std::move(reply), from_);
    } catch (const std::exception& e) {
      spdlog::error("{}: handler failed: {}", owner_->name, e.what());
      pending->send(500, json_type, plugin_error_body(std::string{"internal error: "} + e.what()));
    } catch (...) {
      spdlog::error("{}: handler failed with an unknown exception", owner_->name);
      pending->send(500, json_type, plugin_error_body("internal error"));
    }
  }

  /// The process on the other end (unix sockets), read from /proc at the connection's
  /// first request only: every later request on it shares the same answer, so a
  /// keep-alive client (dockerd, berth-bench) costs no syscall per request.
  std::shared_ptr<const process_stat> peer() {
    if constexpr (std::is_same_v<Protocol, asio::local::stream_protocol>) {
      if (!peer_read_) {
        peer_read_ = true;
        auto who = socket_peer(socket_.native_handle());
        if (who.known()) {
          peer_ = std::make_shared<const process_stat>(std::move(who));
        }
      }
    }
    return peer_;
  }

  /// While the request waits for its answer, notices the client closing the
  /// connection (dockerd does so when it gives up on a call): `from` leaves.
  /// Bytes of a next request (pipelining) end the watch without a verdict. Once
  /// the answer is being written, a close proves nothing (the client may have read
  /// it and hung up): the write's own outcome decides then.
  void watch_peer(caller from) {
    socket_.async_wait(socket_type::wait_read, [self = shared_from_this(), from](error_code err) {
      if (err || self->answering_) {
        return; // closed or cancelled here, or answered: the write path decides
      }
      char byte = 0;
      auto n = ::recv(self->socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
        from.leave("the client closed the connection");
      }
    });
  }

  void on_read_error(error_code err) {
    static const auto& http_category = http::make_error_code(http::error::bad_target).category();
    if (err == http::error::body_limit) {
      keep_alive_ = false;
      write(413, json_type,
            plugin_error_body("request body exceeds the limit of " +
                            std::to_string(owner_->body_limit) + " bytes"),
            false);
    } else if (err == http::error::header_limit) {
      keep_alive_ = false;
      write(431, json_type, plugin_error_body("request header too large"), false);
    } else if (err.category() == http_category && err != http::error::end_of_stream &&
               err != http::error::partial_message) {
      keep_alive_ = false;
      spdlog::debug("{}: malformed request: {}", owner_->name, err.message());
      write(400, json_type, plugin_error_body("malformed HTTP request: " + err.message()), false);
    } else {
      close(); // the peer closed or the connection broke: nobody to answer
    }
  }

  /// Writes a response; `counted` when it answers a request in in_flight.
  void write(unsigned status, std::string content_type, std::string body, bool counted) {
    if (status < 100 || status > 999) {
      status = 500;
    }
    res_ = {};
    res_.version(version_);
    res_.result(status);
    res_.set(http::field::server, "berth");
    res_.set(http::field::content_type, content_type);
    res_.body() = std::move(body);
    bool close_after = !keep_alive_ || owner_->stopped;
    res_.keep_alive(!close_after);
    res_.prepare_payload();
    if (counted) {
      answering_ = true;
    }
    http::async_write(socket_, res_,
                      [self = shared_from_this(), close_after, counted](error_code err, size_t) {
                        if (counted) {
                          if (err) {
                            self->from_.leave("its answer could not be written: "
                                              + err.message());
                          } else {
                            self->from_.answered();
                          }
                          --self->owner_->in_flight;
                        }
                        if (err || close_after) {
                          self->close();
                        } else {
                          self->read_next();
                        }
                      });
  }

  void close() {
    error_code ignored;
    socket_.shutdown(socket_type::shutdown_send, ignored);
    socket_.close(ignored);
  }

  /// Sends the reply once; answers 500 if dropped without a reply.
  struct pending_reply {
    explicit pending_reply(std::shared_ptr<http_session> s) : session(std::move(s)) {
    }
    ~pending_reply() {
      if (!done) {
        spdlog::error("{}: a request was dropped without a reply", session->owner_->name);
        send(500, json_type, plugin_error_body("internal error: the request got no reply"));
      }
    }
    void send(unsigned status, std::string content_type, std::string body) {
      if (!done.exchange(true)) {
        session->post_reply(status, std::move(content_type), std::move(body));
      }
    }
    std::shared_ptr<http_session> session;
    std::atomic<bool> done{false};
  };

  socket_type socket_;
  std::shared_ptr<http_listener<Protocol>> owner_;
  asio::steady_timer timer_; ///< the idle timeout or the request deadline
  uint64_t timer_gen_ = 0;   ///< guards a timer whose cancel raced its expiry
  boost::beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  bool keep_alive_ = true;
  unsigned version_ = 11;
  caller from_;            ///< the client of the request in flight
  std::shared_ptr<const process_stat> peer_; ///< its process (unix sockets), once read
  bool peer_read_ = false;
  bool answering_ = false; ///< its answer is being written (strand only)
};

template <class Protocol>
void http_listener<Protocol>::session_closed() {
  --connections;
  if (!paused.load() || stopped.load()) {
    return;
  }
  // Posted, never inline: a session may end where `mtx` is held (the accept handler).
  asio::post(io, [self = this->shared_from_this()] {
    std::lock_guard<std::mutex> guard{self->mtx};
    if (self->paused.exchange(false) && !self->stopped && self->acceptor.is_open()) {
      spdlog::info("{}: below the cap of {} connections again, accepting on {}", self->name,
                   self->limits.max_connections, self->where);
      self->accept_next();
    }
  });
}

template <class Protocol>
void http_listener<Protocol>::accept_next() {
  if (connections.load() >= limits.max_connections) {
    // Waiting, not refusing: a client in the backlog gets served when a slot frees,
    // rather than an error it would have to retry.
    paused = true;
    if (connections.load() >= limits.max_connections) { // a close since resumes it
      spdlog::warn("{}: {} connections open, the cap; new connections on {} wait until one "
                   "closes", name, connections.load(), where);
      return;
    }
    paused = false;
  }
  acceptor.async_accept(
    asio::make_strand(io),
    [self = this->shared_from_this()](error_code err, typename Protocol::socket socket) {
      if (err == asio::error::operation_aborted) {
        return;
      }
      if (!err) {
        // Before taking `mtx`: ending a session takes it too.
        std::make_shared<http_session<Protocol>>(std::move(socket), self)->start();
      }
      std::lock_guard<std::mutex> guard{self->mtx};
      if (self->stopped || !self->acceptor.is_open()) {
        return;
      }
      if (!err) {
        self->accept_next();
        return;
      }
      spdlog::warn("{}: accept on {} failed: {}; retrying", self->name, self->where, err.message());
      self->retry.expires_after(std::chrono::milliseconds(100));
      self->retry.async_wait([self](error_code timer_err) {
        std::lock_guard<std::mutex> guard{self->mtx};
        if (!timer_err && !self->stopped && self->acceptor.is_open()) {
          self->accept_next();
        }
      });
    });
}


template struct http_listener<asio::local::stream_protocol>;
template struct http_listener<asio::ip::tcp>;

} // namespace berth::detail
