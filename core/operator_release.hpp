#pragma once

// What the admin API asks of the dockerd reconciliation for `berthctl release NAME ID`
// (docs/design.md, "Mount IDs dockerd forgot"). The check needs a fresh container list
// from dockerd (a blocking call of up to limits::docker_api_call_timeout), so it runs on
// the reconciliation's own thread and answers through a callback: the admin API's Beast
// session never blocks.

#include <cstdint>
#include <functional>
#include <string>

#include <caf/expected.hpp>

namespace berth {

/// The outcome of an operator's release.
struct operator_release_result {
  uint32_t dropped = 0; ///< the count dropped (the ID's whole count)
  /// True when the Docker Engine API was asked and no running container holds the ID;
  /// false when it could not be asked (--docker-api off, dockerd down): then
  /// `unchecked_why` says so, and berthd's log too.
  bool checked = false;
  std::string unchecked_why;
};

/// Releases one Docker mount ID for an operator (check_operator_release, then the
/// volume actor's release transition).
class operator_release_desk {
public:
  using done_fn = std::function<void(caf::expected<operator_release_result>)>;

  virtual ~operator_release_desk() = default;

  /// Drops mount ID `id` of Docker volume `volume`. `done` is called once, from any
  /// thread: the result, or ec::not_found (no such Docker volume, or it counts no such
  /// ID), ec::in_use naming the running container, or the volume's error.
  virtual void release(std::string volume, std::string id, done_fn done) = 0;
};

} // namespace berth
