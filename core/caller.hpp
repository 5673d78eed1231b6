#pragma once

// Whether the client behind a request still waits for its answer (docs/design.md,
// "Clients that give up": a request whose caller has gone is not started; a Mount
// whose answer cannot be delivered is undone). The adapter that owns the connection
// or call marks it.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <caf/allowed_unsafe_message_type.hpp>

#include "core/proc_stat.hpp"

namespace berth {

/// Copies share one state, so the adapter can mark a caller gone after the request
/// was sent. A default-constructed caller is never gone (internal requests, tests).
class caller {
public:
  using clock = std::chrono::steady_clock;

  caller() = default;

  /// A caller its adapter tracks; past `deadline` it counts as gone. `peer` is the
  /// process on the other end of its connection, read once per connection by the
  /// server (unix sockets: SO_PEERCRED and /proc/PID/stat) and shared by every request
  /// on it; null when the transport cannot say (TCP, gRPC).
  static caller tracked(clock::time_point deadline = clock::time_point::max(),
                        std::shared_ptr<const process_stat> peer = nullptr);

  /// The client went away (`why`: "connection closed", "call cancelled") before its
  /// answer reached it. Idempotent: the first reason stays; after answered() it is
  /// ignored. Runs the on_gone callbacks. Thread-safe.
  void leave(const std::string& why) const;

  /// The answer reached the client: leave() no longer counts, on_gone callbacks are
  /// dropped. Thread-safe.
  void answered() const;

  /// Runs `fn(why)` once if the client leaves before it is answered: at once when it
  /// has left already (or its deadline passed), else from leave(). Use it to undo an
  /// effect whose answer may never arrive. Dropped for an untracked caller.
  void on_gone(std::function<void(const std::string&)> fn) const;

  /// Why the client is gone ("" while it still waits, and once answered).
  std::string gone() const;

  /// The process that sent the request, as its connection's server read it; null
  /// when unknown (an untracked caller, a transport without peer credentials).
  /// Never changes after tracked(), so it needs no lock.
  const process_stat* peer() const;

  /// Shared between copies.
  struct state;

private:
  std::shared_ptr<state> state_;
};

} // namespace berth

// A caller never leaves the process: sent between actors, never serialized.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(berth::caller)
