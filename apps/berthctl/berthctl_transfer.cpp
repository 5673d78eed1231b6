// berthctl export and import: a tar (or, for export --since and import --onto, a delta of
// a block volume) streamed between berthd's admin socket and berthctl's standard output or
// input (protocols/admin/admin_transfer.hpp has the wire's shape). The other commands read
// whole answers through unix_http_client; these read and write in chunks with Beast, so a
// volume of any size passes through a fixed buffer.

#include <cerrno>
#include <cstring>
#include <ostream>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include "apps/berthctl/berthctl_cli.hpp"
#include "core/errors.hpp"
#include "core/fd_io.hpp"
#include "core/record_json.hpp"

namespace berth::cli {

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using unix_socket = asio::local::stream_protocol::socket;
using boost::system::error_code;

constexpr size_t chunk_bytes = 1 << 16;

/// A connection to berthd's admin socket, or the failure berthctl reports.
caf::error connect(unix_socket& sock, const std::string& socket) {
  error_code err;
  sock.connect(asio::local::stream_protocol::endpoint{socket}, err);
  if (err) {
    return make_error(client_ec::unreachable,
                      unreachable_message(socket, err.value(), err.message()));
  }
  return {};
}

/// A whole (small) answer: berthd's error, or for an import its record.
caf::expected<std::string> read_answer(unix_socket& sock, boost::beast::flat_buffer& buf,
                                       unsigned& status) {
  http::response_parser<http::string_body> parser;
  parser.body_limit(1 << 20);
  error_code err;
  http::read(sock, buf, parser, err);
  if (err) {
    return make_error(client_ec::unreachable, "berthd's answer broke off: " + err.message());
  }
  status = parser.get().result_int();
  return parser.get().body();
}

std::string options_json(const option_map& options) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  w.StartObject();
  for (const auto& [k, v] : options) {
    w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
    w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  }
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

/// `sock` connected to berthd for a stream of the tar through `fd`; a usage error when
/// `fd` is a terminal (a tar is no text for one), saying `what` and how to `redirect`.
caf::error open_stream(unix_socket& sock, const std::string& socket, int fd,
                       const std::string& what, const std::string& redirect) {
  if (::isatty(fd)) {
    return bad_usage(what + ", which is a terminal; redirect it: " + redirect);
  }
  return connect(sock, socket);
}

int fail(std::ostream& err, const caf::error& why, bool json) {
  report_failure(err, why, json);
  return exit_failure;
}

} // namespace

int run_export(const options& opts, int out_fd, std::ostream& err) {
  asio::io_context io;
  unix_socket sock{io};
  // A tar of the files, or with --since a delta of the blocks.
  const bool delta = !opts.since.empty();
  const std::string form = delta ? "delta" : "tar";
  const std::string file = opts.name + (delta ? "-since-" + opts.since + ".delta" : ".tar");
  if (auto failed = open_stream(
        sock, opts.socket, out_fd, "export writes a " + form + " to standard output",
        "berthctl export " + opts.name + (delta ? " --since " + opts.since : "") + " > " + file)) {
    return fail(err, failed, opts.json);
  }
  const std::string since = delta ? "?since=" + opts.since : "";
  http::request<http::empty_body> req{http::verb::get,
                                      "/v1/volumes/" + opts.name + "/export" + since, 11};
  req.set(http::field::host, "berthd");
  error_code ec;
  http::write(sock, req, ec);
  boost::beast::flat_buffer buf;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  if (!ec) {
    http::read_header(sock, buf, parser, ec);
  }
  if (ec) {
    return fail(err, make_error(client_ec::unreachable, "export of " + opts.name
                                                          + ": no answer from berthd: "
                                                          + ec.message()), opts.json);
  }
  if (parser.get().result_int() != 200) {
    http::response_parser<http::string_body> whole{std::move(parser)};
    http::read(sock, buf, whole, ec);
    return fail(err, answer_error(whole.get().result_int(), whole.get().body()), opts.json);
  }
  const std::string consistency{parser.get()["Berth-Consistency"]};
  std::vector<char> chunk(chunk_bytes);
  uint64_t bytes = 0;
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    http::read(sock, buf, parser, ec);
    if (ec == http::error::need_buffer) {
      ec = {};
    }
    if (ec) {
      break;
    }
    auto n = chunk.size() - parser.get().body().size;
    if (!write_all(out_fd, chunk.data(), n)) {
      return fail(err,
                  make_error(ec::internal,
                             "export of " + opts.name + ": cannot write the " + form + ": "
                               + std::strerror(errno)),
                  opts.json);
    }
    bytes += n;
  }
  if (ec) {
    // berthd ends a failed export without its last chunk: what was written is incomplete.
    return fail(err,
                make_error(ec::backend_failure,
                           "export of " + opts.name + " broke off after " + std::to_string(bytes)
                             + " bytes (" + ec.message() + "): the " + form
                             + " is incomplete; berthd's log says why"),
                opts.json);
  }
  if (consistency == copy_crash_consistent) {
    err << "berthctl: volume " << opts.name << " was in use while it was copied for the "
        << "export: the " << form << " is crash-consistent only (docs: \"What consistent "
        << "means\")\n";
  }
  return exit_ok;
}

int run_import(const options& opts, int in_fd, std::ostream& out, std::ostream& err) {
  asio::io_context io;
  unix_socket sock{io};
  // A tar into a new volume, or with --onto a delta onto an existing one.
  const bool delta = !opts.onto.empty();
  if (auto failed =
        open_stream(sock, opts.socket, in_fd,
                    delta ? "import --onto reads a delta from standard input"
                          : "import reads a tar from standard input",
                    delta ? "berthctl import --onto " + opts.name + " < FILE.delta"
                          : "berthctl import " + opts.name + " < " + opts.name + ".tar")) {
    return fail(err, failed, opts.json);
  }
  http::request<http::empty_body> req{
    http::verb::post, "/v1/volumes/" + opts.name + (delta ? "/delta" : "/import"), 11};
  req.set(http::field::host, "berthd");
  req.set(http::field::content_type, delta ? "application/octet-stream" : "application/x-tar");
  if (!delta) {
    req.set("Berth-Options", options_json(opts.parameters));
  }
  req.chunked(true);
  http::request_serializer<http::empty_body> head{req};
  error_code ec;
  http::write_header(sock, head, ec);
  std::vector<char> chunk(chunk_bytes);
  bool read_failed = false;
  // berthd may refuse before it reads the whole tar or delta (the name taken, a bad option,
  // a delta of another base): the write then fails, and its answer is read below.
  while (!ec) {
    auto n = ::read(in_fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      read_failed = true;
      break;
    }
    if (n == 0) {
      asio::write(sock, http::make_chunk_last(), ec);
      break;
    }
    asio::write(sock, http::make_chunk(asio::buffer(chunk.data(), static_cast<size_t>(n))), ec);
  }
  if (read_failed) {
    return fail(err,
                make_error(ec::invalid_argument,
                           "import of " + opts.name
                             + ": cannot read standard input: " + std::strerror(errno)
                             + (delta ? "; nothing was changed" : "; nothing was made")),
                opts.json);
  }
  boost::beast::flat_buffer buf;
  unsigned status = 0;
  auto body = read_answer(sock, buf, status);
  if (!body) {
    return fail(err, body.error(), opts.json);
  }
  if (status != 200) {
    return fail(err, answer_error(status, *body), opts.json);
  }
  if (opts.json) {
    out << *body << "\n";
    return exit_ok;
  }
  if (delta) {
    auto text = format_delta_applied(*body);
    if (!text) {
      return fail(err, unreadable_answer(text.error()), opts.json);
    }
    out << *text;
    return exit_ok;
  }
  auto rec = record_from_json(*body);
  if (!rec) {
    return fail(err, unreadable_answer(rec.error()), opts.json);
  }
  out << "volume " << rec->name << " imported (backend " << rec->backend
      << (rec->capacity_bytes != 0 ? ", size " + format_size(rec->capacity_bytes) : "")
      << ")\n";
  return exit_ok;
}

} // namespace berth::cli
