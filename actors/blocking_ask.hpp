#pragma once

// The one way a thread that is not an actor asks an actor and waits for its answer: the
// node agent's desk, the dockerd sync's seams, the admin API's transfers, berthd's usage
// sampler and its stop. Each caller names its own bound, and what it asked, so a request
// that outlives it says who did not answer.

#include <string>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/duration.hpp>
#include <caf/expected.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/sec.hpp>

#include "core/errors.hpp"

namespace berth {

/// Asks `to` with `xs` and blocks the calling thread (never an actor's) until the answer,
/// or for at most `timeout` (`caf::infinite` where the answer is bounded elsewhere).
/// Returns the answer, the actor's error, or ec::timeout reading "WHO did not answer
/// within T": the request may still be carried out after.
template <class T, class Handle, class Timeout, class... Ts>
caf::expected<T> blocking_ask(caf::actor_system& sys, const Handle& to, Timeout timeout,
                     const std::string& who, Ts&&... xs) {
  caf::duration bound{timeout};
  caf::scoped_actor self{sys};
  caf::expected<T> out{make_error(ec::internal, who + " did not answer")};
  self->request(to, bound, std::forward<Ts>(xs)...)
    .receive([&](T& value) { out = std::move(value); },
             [&](caf::error& err) {
               if (err == caf::sec::request_timeout) {
                 out = make_error(ec::timeout, who + " did not answer within " + to_string(bound)
                                                 + " (what it was asked may still happen)");
               } else {
                 out = std::move(err);
               }
             });
  return out;
}

} // namespace berth
