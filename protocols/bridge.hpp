#pragma once

// From non-actor code (a Beast session) to an actor and back, without
// blocking any thread: a short-lived actor sends the request, runs a callback
// with the reply, and terminates.

#include <chrono>
#include <exception>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/detail/type_traits.hpp>
#include <caf/duration.hpp>
#include <caf/error.hpp>
#include <caf/event_based_actor.hpp>
#include <spdlog/spdlog.h>

namespace berth {

namespace detail {

/// Wraps a reply callback, keeping its exact signature (CAF matches replies by
/// the handler's argument types) and logging exceptions instead of letting
/// them kill the actor.
template <class F, class Args = typename caf::detail::get_callable_trait<F>::arg_types>
struct guarded_callback;

template <class F, class... Args>
struct guarded_callback<F, caf::detail::type_list<Args...>> {
  F fn;
  void operator()(Args... xs) {
    try {
      fn(std::forward<Args>(xs)...);
    } catch (const std::exception& e) {
      spdlog::error("reply callback failed: {}", e.what());
    } catch (...) {
      spdlog::error("reply callback failed with an unknown exception");
    }
  }
};

} // namespace detail

/// Timeout for volume transitions (create, mount, unmount, remove): none here.
/// The volume actor bounds every backend call with its own timeout and always
/// answers, so a second, shorter deadline in the adapter could only report a
/// failure while the transition still completes.
inline constexpr caf::duration transition_timeout{caf::infinite};

/// Timeout for queries (get, list, path). A query may queue behind one
/// transition of its volume, which is itself bounded by the backend timeout;
/// this only guards against a reply that never comes.
inline const caf::duration query_timeout{std::chrono::minutes(2)};

/// Sends `xs...` to `dest` and calls `on_ok(result...)` or `on_err(caf::error&)`
/// exactly once, on an actor thread. Never blocks. `timeout` is a caf::duration
/// (use caf::infinite for no timeout). Exceptions from the callbacks are logged
/// and swallowed (CAF 0.17 would otherwise kill the actor silently).
template <class Handle, class OnOk, class OnErr, class... Ts>
void ask(caf::actor_system& sys, const Handle& dest, caf::duration timeout, OnOk on_ok,
         OnErr on_err, Ts... xs) {
  // `dest` travels as a spawn argument: CAF 0.17 dereferences a null argument
  // tuple when a function actor is spawned without arguments (UBSan).
  sys.spawn(
    [=](caf::event_based_actor* self, Handle receiver) mutable {
      // With no behavior left, the actor lives until this response arrives
      // (scheduled_actor::alive() counts awaited responses), then terminates.
      self->request(receiver, timeout, std::move(xs)...)
        .then(detail::guarded_callback<OnOk>{std::move(on_ok)},
              detail::guarded_callback<OnErr>{std::move(on_err)});
    },
    dest);
}

} // namespace berth
