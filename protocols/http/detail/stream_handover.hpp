#pragma once

// What a session hands over for a stream request (http_handler.hpp, stream_request): the
// header as read, what followed it, and the connection itself, in blocking mode.

#include <fcntl.h>

#include <sstream>
#include <string>

#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/system/error_code.hpp>

#include "protocols/http/http_handler.hpp"

namespace berth::detail {

/// Takes the connection out of `socket` (which owns it no more) with the request whose
/// header `parser` read and the bytes `buffer` holds after it (consumed). `err` says why
/// the socket could not give its descriptor up; the request is then empty.
template <class Socket, class Parser, class Buffer>
stream_request take_stream(Socket& socket, const Parser& parser, Buffer& buffer,
                           boost::system::error_code& err) {
  stream_request r;
  const auto& req = parser.get();
  r.method = std::string{req.method_string()};
  r.target = std::string{req.target()};
  std::ostringstream head;
  head << req.base(); // the start line and the fields, ending with the blank line
  r.head = head.str() + boost::beast::buffers_to_string(buffer.data());
  buffer.consume(buffer.size());
  int fd = socket.release(err);
  if (err) {
    return r;
  }
  // Blocking from here: the taker's thread reads and writes with deadlines of its own.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  r.fd = fd;
  return r;
}

} // namespace berth::detail
