#pragma once

// From a thread that is no actor straight to the registry, for what only the registry may
// do (a creation or a removal of a name): no gateway actor between the adapter and the
// registry, either way (docs/design.md, "Three hops").

#include <utility>

#include <caf/send.hpp>

#include "actors/actors.hpp"
#include "core/errors.hpp"

namespace berth {

/// Sends `op, xs...` to `registry` with a direct_reply that calls `answer` on the
/// registry's thread, which also receives the volume's answer to a transition. A request
/// the registry dropped unanswered, because it had quit, is answered ec::unavailable.
template <class R, class Op, class... Ts>
void send_to_registry(const registry_actor& registry, typename direct_reply<R>::on_answer answer,
                      Op op, Ts... xs) {
  auto dropped = [answer] {
    answer(make_error(ec::unavailable, "berthd is stopping: its registry takes no requests"));
  };
  caf::anon_send(registry, op, std::move(xs)...,
                 direct_reply<R>{std::move(answer), std::move(dropped)});
}

} // namespace berth
