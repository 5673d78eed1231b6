#pragma once

// The admin API's streams: berthctl export and import, a volume's files as a tar streamed
// through berthd over the admin socket (docs/running.md, "Export and import"), and
// berthctl snapshot diff, whose answer may be long and whose reads may be slow.
//
//   GET  /v1/volumes/NAME/export  -> 200 application/x-tar, chunked: a tar of a copy of
//        Docker volume NAME made for this export (deleted after it), with the header
//        Berth-Consistency: consistent | crash-consistent. An error before the first byte
//        is an admin API error ({"error": ...}); one after it ends the stream without its
//        last chunk, so the client sees that the tar was cut short.
//   POST /v1/volumes/NAME/import  -> the new volume's record: the body is a tar (chunked,
//        or with a length), header Berth-Options the volume's options as a JSON object of
//        strings ({} or absent: none). The name and options are checked before the body is
//        read; the tar is extracted into STATE/imports/ID/data, and only a tar GNU tar
//        extracts without a complaint becomes the volume. Nothing is left otherwise.
//   GET  /v1/volumes/NAME/export?since=SNAP -> 200 application/octet-stream, chunked: the
//        blocks of Docker block volume NAME changed since its snapshot SNAP, as a delta
//        (detail/delta_export.hpp).
//   POST /v1/volumes/NAME/delta -> 200 application/json: such a delta, the body, applied
//        to Docker block volume NAME, which must hold its base snapshot's bytes and be
//        unused (detail/delta_import.hpp). Nothing changes otherwise.
//   GET  /v1/snapshots/TARGET/diff?base=BASE -> 200 application/json, chunked: the ranges
//        in which Docker block snapshot TARGET differs from BASE (detail/snapshot_diff.hpp).
//
// The HTTP server hands such a request over once its header is read; each runs on a
// thread of its own, at most max_streams at once (more are answered 429).

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "backends/backend.hpp"
#include "core/record_directory.hpp"
#include "core/telemetry/telemetry.hpp"
#include "protocols/http/http_handler.hpp"

namespace berth {

class admin_transfers {
public:
  struct config {
    std::string imports_dir;        ///< STATE/imports: each import's staging directory (a
                                    ///< tar's, or a delta's spool)
    size_t max_streams = 2;         ///< exports and imports at once
    /// A client silent this long (no byte read, or none taken) ends its stream.
    std::chrono::seconds idle{60};
    /// What a snapshot diff and a delta read: the committed records, and the backends by
    /// name.
    std::shared_ptr<const record_directory> directory;
    std::map<std::string, std::shared_ptr<backend>> backends;
  };

  admin_transfers(caf::actor_system& sys, registry_actor registry,
                  std::shared_ptr<telemetry> stats, config cfg);
  /// stop().
  ~admin_transfers();

  admin_transfers(const admin_transfers&) = delete;
  admin_transfers& operator=(const admin_transfers&) = delete;

  /// STATE/imports under the state directory `state_dir`: where imports stage, which the
  /// start-up sweep empties.
  static std::string imports_dir_of(const std::string& state_dir) {
    return state_dir + "/imports";
  }

  /// The requests that are streams: GET .../export and POST .../import of a volume, and
  /// GET .../diff of a snapshot.
  static bool routes(const std::string& method, const std::string& target);

  /// Takes a stream request over (never blocks): serves it on a thread of its own, at most
  /// max_streams of every kind at once.
  void take(stream_request request);

  /// Ends every stream in flight (their tar killed, their connection shut) and waits for
  /// their threads. Later requests are answered 503.
  void stop();

private:
  struct stream;
  void serve(const std::shared_ptr<stream>& s);
  void reap_finished();

  caf::actor_system& sys_;
  registry_actor registry_;
  std::shared_ptr<telemetry> stats_;
  config cfg_;
  std::mutex mu_;
  bool stopping_ = false;
  std::vector<std::shared_ptr<stream>> streams_;
};

} // namespace berth
