#pragma once

// The two streams of admin_transfers, apart from its threads: an export (GNU tar of the
// volume's copy, written as a chunked answer) and an import (the request's body into GNU
// tar, then the volume made from what it extracted). Each answers on the connection itself.

#include <functional>
#include <string>
#include <vector>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "actors/blocking_ask.hpp"
#include "core/errors.hpp"
#include "protocols/admin/detail/tar_process.hpp"

namespace berth::admin::detail {

using unix_socket = boost::asio::local::stream_protocol::socket;

/// 16 random hex digits: an export's or an import's name of its own.
std::string random_id();

/// A new staging directory of an import, IMPORTS/ID (mode 0700, as IMPORTS); the start-up
/// sweep deletes what a crash leaves there. An error names `what`.
caf::expected<std::string> make_staging(const std::string& imports_dir, const std::string& what);

/// Deletes an import's staging directory. A block import mounts its new filesystem at
/// DIR/mnt and unmounts it before it answers; should that have failed, the mount is
/// detached first, so the deletion never descends into it.
void drop_staging(const std::string& dir);

/// Writes a whole JSON answer and ends the connection's part in it.
void answer(unix_socket& sock, unsigned status, std::string body);

/// What one stream needs: its connection, what was read of it, the registry.
struct transfer {
  caf::actor_system& sys;
  const registry_actor& registry;
  unix_socket& sock;
  boost::beast::flat_buffer& buf;

  /// A request to the registry, waited for: without a bound of its own, since an export's
  /// copy and an import's creation are backend calls, each bounded by the backend timeout.
  template <class T, class... Ts>
  caf::expected<T> ask(Ts&&... xs) {
    return blocking_ask<T>(sys, registry, caf::infinite, "the registry", std::forward<Ts>(xs)...);
  }

  /// Answers `err` as the admin API does.
  void fail(const caf::error& err);

  /// fail(err), then `err`: the refusal as it was answered.
  caf::error refuse(caf::error err) {
    fail(err);
    return err;
  }

  /// Asks for export `id` of volume `name` to be closed (its copy deleted); a failure is
  /// logged for `what`, since the next start deletes the copy anyway.
  void close_export(const std::string& name, const std::string& id, const std::string& what);

  /// Reads the rest of a request that takes no body: its target. A malformed one is
  /// refused (answered), naming `what`.
  caf::expected<std::string> read_bodiless(const std::string& what);

  /// The next piece of a request's body, read into `chunk` through `parser`: how many
  /// bytes (0 at the end); sets `err` when the client broke off.
  size_t read_body(boost::beast::http::request_parser<boost::beast::http::buffer_body>& parser,
                   std::vector<char>& chunk, boost::system::error_code& err);

  /// Writes the head of a chunked 200 answer of `content_type`, with the header
  /// Berth-Consistency when `consistency` is set. Sets `err` when the client is gone.
  void start_chunks(const char* content_type, const std::string& consistency,
                    boost::system::error_code& err);
};

/// Called with the tar a stream runs (nullptr when it has ended), so a stop can end it.
using tar_watch = std::function<void(tar_process*)>;

/// GET /v1/volumes/NAME/export, the request's head in `t.buf`. Returns how it ended.
caf::error run_export(transfer& t, const std::string& name, const tar_watch& running);

/// POST /v1/volumes/NAME/import, the request's head (and the body's start) in `t.buf`;
/// stages under `imports_dir`. Returns how it ended.
caf::error run_import(transfer& t, const std::string& name, const std::string& imports_dir,
                      const tar_watch& running);

} // namespace berth::admin::detail
