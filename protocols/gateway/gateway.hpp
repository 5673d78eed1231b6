#pragma once

// From non-actor code (a Beast session) to an actor and back, without
// blocking any thread (see class gateway).

#include <chrono>
#include <exception>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/detail/type_traits.hpp>
#include <caf/duration.hpp>
#include <caf/error.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/send.hpp>
#include <functional>
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

/// A job the gateway runs inside its actor.
using gateway_job = std::function<void(caf::event_based_actor*)>;

} // namespace berth

// Jobs never leave the process: no serialization needed.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(berth::gateway_job)

namespace berth {

/// From non-actor code (a Beast session) to an actor and back, without blocking
/// any thread: one long-lived actor sends each request and runs its callback with
/// the reply. Cheaper than an actor per request (no spawn, no teardown), which shows
/// at thousands of requests per second.
class gateway {
public:
  explicit gateway(caf::actor_system& sys);
  ~gateway();

  gateway(const gateway&) = delete;
  gateway& operator=(const gateway&) = delete;

  /// Sends `xs...` to `dest` and calls `on_ok(result...)` or `on_err(caf::error&)`
  /// exactly once, on an actor thread. Never blocks. `timeout` is a caf::duration
  /// (caf::infinite for none). Exceptions from the callbacks are logged and swallowed
  /// (CAF 0.17 would otherwise kill the actor silently).
  template <class Handle, class OnOk, class OnErr, class... Ts>
  void ask(const Handle& dest, caf::duration timeout, OnOk on_ok, OnErr on_err, Ts... xs) {
    ask_through(actor_, dest, timeout, std::move(on_ok), std::move(on_err), std::move(xs)...);
  }

  /// The gateway's actor. A copy may outlive this object: an ask_through() it after the
  /// gateway stopped is dropped, as a request at shutdown may be.
  const caf::actor& actor() const { return actor_; }

  /// ask(), through the gateway actor `gw` (actor()).
  template <class Handle, class OnOk, class OnErr, class... Ts>
  static void ask_through(const caf::actor& gw, const Handle& dest, caf::duration timeout,
                          OnOk on_ok, OnErr on_err, Ts... xs) {
    caf::anon_send(gw, gateway_job{[=](caf::event_based_actor* self) mutable {
                     self->request(dest, timeout, std::move(xs)...)
                       .then(detail::guarded_callback<OnOk>{std::move(on_ok)},
                             detail::guarded_callback<OnErr>{std::move(on_err)});
                   }});
  }

private:
  caf::actor actor_;
};

} // namespace berth
