#pragma once

// How a backend call that succeeded after its caller was told it timed out is settled:
// a function of the volume's record as it is when the settle's turn comes, which answers
// what to do (struct settlement, actors/machine/running_transition.hpp): a transition
// that undoes the effect (a mount the record lacks) or adopts it (a finished remove), a
// reconciliation with the host, or nothing (a retry got it meanwhile). It is data the
// driver carries out in turn, so no retry races it; it holds no actor.

#include <functional>

namespace berth {

class committed_record;
struct settlement;

/// Settles a late success from the committed record of its turn.
using late_settle = std::function<settlement(const committed_record& now)>;

} // namespace berth
