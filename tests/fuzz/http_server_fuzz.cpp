// Fuzzes berth's HTTP server (protocols/http/unix_http_server.hpp, the session of
// http_listener.cpp that the Docker plugin and the admin API run) with a byte stream
// on a real unix socket. One server, made once, runs on an io_context this thread
// polls; each input is one connection: the client writes the payload in pieces of a
// size the input picks, running the server between pieces (so the session reads exactly
// those pieces), then half-closes and reads every answer until the server closes.
// The handler echoes the method, the target and the body; per request the input
// picks whether it replies at once, from a posted handler, only after the next piece
// (a pipelined request arrives while it waits), drops the reply or throws.
//
// Oracles: no crash, leak or UB; the handler never sees a body over the body limit;
// the session ends (the server closes and the connection is gone) within a bound once
// the client has half-closed, though every server timer is far longer; and the answers
// are exactly those of the payload read whole by a request parser with the server's
// limits: each request's echo (500 when dropped or thrown), stopping after a request
// without keep-alive, and then 413 past the body limit, 431 past the header limit
// (Beast's default, 8 KiB), 400 for a malformed request (or 431, or nothing: how Beast
// reads a malformed request line depends on its pieces, see expectation), or nothing
// when the stream just ends.
//
// Input: [behaviours][piece size][payload]. Request k's behaviour is bits 2(k%4) and
// up of the first byte; piece size 0 writes the payload at once.

#include <sys/socket.h>
#include <sys/un.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/_experimental/test/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include "protocols/http/unix_http_server.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace berth;
namespace http = boost::beast::http;
using boost::system::error_code;

namespace {

constexpr size_t body_limit = 512;

/// How long a session may take to end once the client half-closed: every server
/// timer is far longer, so only a session that hangs can reach it.
constexpr auto end_bound = std::chrono::seconds(3);

enum class behaviour { now, posted, held, dropped_or_thrown };

/// What the handler of the current input does; set per input.
struct handler_plan {
  uint8_t bits = 0;
  size_t requests = 0; ///< requests handled so far on this connection
  std::vector<reply_fn> held;
};

handler_plan plan;

behaviour behaviour_of(uint8_t bits, size_t k) {
  return static_cast<behaviour>((bits >> (2 * (k % 4))) & 3);
}

std::string echo(const std::string& method, const std::string& target, const std::string& body) {
  return method + " " + target + "\n" + body;
}

struct server_box {
  boost::asio::io_context io;
  std::string dir;
  std::string path;
  unix_http_server server;

  server_box(std::string d, http_server_limits lim)
    : dir(std::move(d)), path(dir + "/http.sock"),
      server(io,
             [this](const std::string& method, const std::string& target, std::string body,
                    reply_fn reply, const caller& from) {
               handle(method, target, std::move(body), std::move(reply), from);
             },
             lim, "fuzz") {
  }

  void handle(const std::string& method, const std::string& target, std::string body,
              reply_fn reply, const caller&) {
    fuzz::check(body.size() <= body_limit, "the handler never sees a body over the limit",
                std::to_string(body.size()) + " bytes");
    auto k = plan.requests++;
    auto text = echo(method, target, body);
    switch (behaviour_of(plan.bits, k)) {
      case behaviour::now:
        reply(200, "text/plain", std::move(text));
        return;
      case behaviour::posted:
        boost::asio::post(io, [reply, text] { reply(200, "text/plain", text); });
        return;
      case behaviour::held:
        plan.held.push_back([reply, text](unsigned, std::string, std::string) {
          reply(200, "text/plain", text);
        });
        return;
      case behaviour::dropped_or_thrown:
        if (k % 2 == 1) {
          throw std::runtime_error("thrown by the fuzz handler");
        }
        return; // the reply is dropped: the server answers 500
    }
  }

  /// Runs every handler that is ready, until none is.
  void pump() {
    while (io.poll() > 0) {
    }
    if (io.stopped()) {
      io.restart();
    }
  }
};

server_box* box = nullptr;

void remove_socket_dir() {
  ::unlink(box->path.c_str());
  ::rmdir(box->dir.c_str());
}

void release_held() {
  auto held = std::move(plan.held);
  plan.held.clear();
  for (auto& r : held) {
    r(0, {}, {});
  }
}

// -- what the answers must be ----------------------------------------------------

/// A stream that yields `bytes`, then its end, and the buffer a parser reads it into.
struct replay {
  explicit replay(const std::string& bytes) : in(ioc, bytes), peer(ioc) {
    in.connect(peer);
    peer.close();
  }
  boost::asio::io_context ioc;
  boost::beast::test::stream in;
  boost::beast::test::stream peer;
  boost::beast::flat_buffer buffer;
};

struct answer {
  unsigned status = 0;
  std::string body; ///< the echo, for 200
};

std::string describe(const std::vector<answer>& v) {
  std::string out;
  for (const auto& a : v) {
    out += std::to_string(a.status) + "(" + std::to_string(a.body.size()) + ") ";
  }
  return out;
}

/// The answers to a payload read whole. Whether Beast (1.81) sees that a request line is
/// malformed depends on how its bytes arrive: read whole, "POST /x: 2\r\n\r\n{}POST" is a
/// bad version at once; a byte at a time, the parser asks for the 8 bytes of a version
/// after "2", moves its search for the header's end past the "\r\n\r\n", and waits for
/// more until the header limit, the request deadline or the end of the stream. So a final
/// 400 may be a 431, or missing (the connection ends without an answer): `last_is_400`.
struct expectation {
  std::vector<answer> answers;
  bool last_is_400 = false;
};

/// The answers to `payload` read whole, with the server's limits.
expectation expected_answers(const std::string& payload, uint8_t bits) {
  replay stream{payload};
  expectation out;
  static const auto& http_category = http::make_error_code(http::error::bad_target).category();
  for (size_t k = 0;; ++k) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(body_limit);
    error_code err;
    http::read(stream.in, stream.buffer, parser, err);
    if (err == http::error::body_limit) {
      out.answers.push_back({413, {}});
    } else if (err == http::error::header_limit) {
      out.answers.push_back({431, {}});
    } else if (err && err.category() == http_category && err != http::error::end_of_stream
               && err != http::error::partial_message) {
      out.answers.push_back({400, {}});
      out.last_is_400 = true;
    }
    if (err) {
      return out;
    }
    auto req = parser.release();
    if (behaviour_of(bits, k) == behaviour::dropped_or_thrown) {
      out.answers.push_back({500, {}});
    } else {
      out.answers.push_back({200, echo(std::string{req.method_string()},
                                       std::string{req.target()}, req.body())});
    }
    if (!req.keep_alive()) {
      return out;
    }
  }
}

/// The answers in what the server wrote; fails the oracle on bytes that are none.
std::vector<answer> parse_answers(const std::string& wire) {
  replay stream{wire};
  std::vector<answer> out;
  for (;;) {
    http::response_parser<http::string_body> parser;
    parser.body_limit(boost::none);
    error_code err;
    http::read(stream.in, stream.buffer, parser, err);
    if (err == http::error::end_of_stream) {
      return out;
    }
    fuzz::check(!err, "the server writes whole HTTP responses", err.message());
    auto res = parser.release();
    out.push_back({res.result_int(), res.result_int() == 200 ? res.body() : std::string{}});
  }
}

// -- one connection --------------------------------------------------------------

int connect_client() {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  fuzz::check(fd >= 0, "a client socket opens");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  box->path.copy(addr.sun_path, sizeof addr.sun_path - 1);
  fuzz::check(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0,
              "the client connects");
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

/// Reads what the server has written; false once it closed.
bool drain(int fd, std::string& wire) {
  char buf[4096];
  for (;;) {
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      wire.append(buf, static_cast<size_t>(n));
      continue;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

/// Writes `piece` (the server runs while the socket is full); false once the
/// server closed its end.
bool send_piece(int fd, const char* p, size_t n, std::string& wire) {
  while (n > 0) {
    auto sent = ::send(fd, p, n, MSG_NOSIGNAL);
    if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      return false; // EPIPE, ECONNRESET: it answered and closed
    }
    if (sent > 0) {
      p += sent;
      n -= static_cast<size_t>(sent);
    }
    box->pump();
    drain(fd, wire);
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  char dir[] = "/tmp/berth-fuzz-http.XXXXXX";
  fuzz::check(::mkdtemp(dir) != nullptr, "a socket directory is made");
  http_server_limits lim;
  lim.body_limit = body_limit;
  lim.request_deadline = std::chrono::seconds(60);
  lim.idle_timeout = std::chrono::seconds(60);
  box = new server_box(dir, lim);
  auto err = box->server.listen(box->path);
  fuzz::check(!err, "the server listens", box->path);
  std::atexit(remove_socket_dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) {
    return 0;
  }
  plan = handler_plan{};
  plan.bits = data[0];
  size_t piece = data[1];
  std::string payload(reinterpret_cast<const char*>(data + 2), size - 2);
  int fd = connect_client();
  std::string wire;
  box->pump();
  bool open = true;
  for (size_t at = 0; open && at < payload.size();) {
    size_t n = piece == 0 ? payload.size() - at : std::min(piece, payload.size() - at);
    open = send_piece(fd, payload.data() + at, n, wire);
    at += n;
    release_held();
    box->pump();
  }
  ::shutdown(fd, SHUT_WR);
  auto until = std::chrono::steady_clock::now() + end_bound;
  for (size_t round = 0;; ++round) {
    release_held();
    box->pump();
    bool server_open = drain(fd, wire);
    if (!server_open && box->server.connections() == 0) {
      break;
    }
    fuzz::check(std::chrono::steady_clock::now() < until, "the session ends",
                std::string{server_open ? "the server never closed" : "the session lingers"}
                  + " after " + std::to_string(plan.requests) + " requests");
    if (round > 100) {
      ::usleep(1000);
    }
  }
  ::close(fd);
  auto got = parse_answers(wire);
  auto expected = expected_answers(payload, plan.bits);
  auto& want = expected.answers;
  if (expected.last_is_400 && got.size() + 1 == want.size()) {
    want.pop_back();
  } else if (expected.last_is_400 && got.size() == want.size() && got.back().status == 431) {
    want.back().status = 431;
  }
  fuzz::check(got.size() == want.size(), "one answer per request, as the whole stream reads",
              "got " + describe(got) + "; want " + describe(want));
  for (size_t i = 0; i < got.size(); ++i) {
    fuzz::check(got[i].status == want[i].status && got[i].body == want[i].body,
                "each answer as the whole stream reads",
                "answer " + std::to_string(i) + ": got " + describe(got) + "; want "
                  + describe(want));
  }
  return 0;
}
