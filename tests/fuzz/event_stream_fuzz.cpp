// Fuzzes a streamed response body as the Docker Engine client reads /events and the
// Kubernetes client a watch: a Beast response_parser<buffer_body> with no body limit,
// read through body_lines (protocols/http/body_lines.hpp), each line through
// parse_event (protocols/docker/engine/engine_json.hpp) and parse_watch_line
// (protocols/kube/kube_json.hpp), the last unfinished one too, as the watch reads it. The bytes come from a beast test stream
// whose reads return 1 byte, a size the input picks, or everything at once. Oracle:
// wherever the stream splits, the same lines, the same unfinished rest and the same
// end come out, so an event never depends on how the kernel cut the bytes.
//
// Input: [chunk size][read size][mode][payload]. Mode bit 0 set: the payload is the
// wire after the status line (headers and body as they come); else it is the body,
// sent chunked in chunks of the chunk size.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/beast/_experimental/test/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>

#include "protocols/docker/engine/engine_json.hpp"
#include "protocols/http/body_lines.hpp"
#include "protocols/kube/kube_json.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace berth;
namespace http = boost::beast::http;

namespace {

struct read_result {
  bool header_ok = false;
  std::vector<std::string> lines;
  std::string rest;
};

bool operator==(const read_result& a, const read_result& b) {
  return a.header_ok == b.header_ok && a.lines == b.lines && a.rest == b.rest;
}

read_result read_all(const std::string& wire, size_t read_size) {
  boost::asio::io_context ioc;
  boost::beast::test::stream in(ioc, wire);
  boost::beast::test::stream peer(ioc);
  in.connect(peer);
  peer.close(); // in reads the wire, then end of stream
  in.read_size(read_size);
  boost::beast::flat_buffer buffer;
  body_lines::parser_type parser;
  parser.body_limit(boost::none); // as the events client: an endless stream
  read_result out;
  boost::system::error_code err;
  http::read_header(in, buffer, parser, err);
  if (err) {
    return out;
  }
  out.header_ok = true;
  body_lines lines{parser, [&] {
    boost::system::error_code e;
    http::read_some(in, buffer, parser, e);
    return e;
  }};
  for (;;) {
    bool more = lines.read_more();
    while (auto line = lines.next_line()) {
      out.lines.push_back(*line);
    }
    if (!more) {
      break;
    }
  }
  out.rest = lines.pending();
  return out;
}

std::string chunked(const std::string& body, size_t chunk) {
  std::string out = "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (size_t at = 0; at < body.size(); at += chunk) {
    auto piece = body.substr(at, chunk);
    char size[20];
    std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
    out += size + piece + "\r\n";
  }
  return out + "0\r\n\r\n";
}

std::string describe(const read_result& r) {
  std::string out = r.header_ok ? "header read;" : "no header;";
  for (const auto& l : r.lines) {
    out += " line of " + std::to_string(l.size());
  }
  return out + "; rest of " + std::to_string(r.rest.size());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) {
    return 0;
  }
  size_t chunk = 1 + data[0] % 64;
  size_t read_size = 1 + data[1];
  bool raw = (data[2] & 1) != 0;
  std::string payload(reinterpret_cast<const char*>(data + 3), size - 3);
  std::string wire = "HTTP/1.1 200 OK\r\n" + (raw ? payload : chunked(payload, chunk));
  auto whole = read_all(wire, wire.size() + 1);
  for (size_t split : {size_t{1}, read_size}) {
    auto pieces = read_all(wire, split);
    fuzz::check(pieces == whole, "the same lines however the stream splits",
                "reads of " + std::to_string(split) + ": " + describe(pieces) + " vs whole: "
                  + describe(whole));
  }
  if (!raw) {
    fuzz::check(whole.header_ok, "a chunked answer's header reads");
    std::string joined;
    for (const auto& l : whole.lines) {
      joined += l + "\n";
    }
    fuzz::check(joined + whole.rest == payload, "the lines and the rest are the body");
  }
  for (const auto& line : whole.lines) {
    (void)docker_engine::parse_event(line);
    (void)kube::parse_watch_line(line);
  }
  (void)kube::parse_watch_line(whole.rest);
  return 0;
}
