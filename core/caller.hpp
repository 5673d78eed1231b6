#pragma once

// Whether the client behind a request still waits for its answer (issue 7: a
// request whose caller has gone is not started; a Mount whose answer cannot be
// delivered is undone). The adapter that owns the connection or call marks it.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <caf/allowed_unsafe_message_type.hpp>

namespace berth {

/// Copies share one state, so the adapter can mark a caller gone after the request
/// was sent. A default-constructed caller is never gone (internal requests, tests).
class caller {
public:
  using clock = std::chrono::steady_clock;

  caller() = default;

  /// A caller its adapter tracks; past `deadline` it counts as gone.
  static caller tracked(clock::time_point deadline = clock::time_point::max());

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

  /// Shared between copies.
  struct state;

private:
  std::shared_ptr<state> state_;
};

} // namespace berth

// A caller never leaves the process: sent between actors, never serialized.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(berth::caller)
