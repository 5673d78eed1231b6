#pragma once

// The work of one transition, as data: what the driver (actors/volume_calls.cpp) carries
// out before the record changes. A backend call on the executor, work on the actor
// thread, or nothing (a change of the record only). Nothing here runs it: a description
// says what happens, and the driver alone decides when, so no transition holds a chain
// of continuations of its own.

#include <functional>
#include <memory>
#include <optional>

#include "actors/machine/call_slot.hpp"
#include "backends/backend.hpp"
#include "core/errors.hpp"
#include "core/telemetry/backend_call.hpp"

namespace berth {

/// One backend call.
struct backend_work {
  backend_call kind = backend_call::reconcile;
  std::function<caf::error(backend&)> run; ///< on the executor
  late_settle settle; ///< settles it when it succeeds after its timeout (late_settle.hpp)
  /// The call that follows a timeout of this one, and may start beside it while it hangs
  /// (the lazy detach standing in for a hung unmount: MNT_DETACH does not wait for the
  /// server). Null: the timeout is the outcome.
  std::shared_ptr<const backend_work> after_timeout;
  /// ec::unsupported counts as success: a backend without the call has nothing of its own
  /// to clean there.
  bool unsupported_is_done = false;
};

/// The work of a transition. Its result, when it has one, is written where the typed
/// description reads it (detail::work_of); the driver sees only the error.
struct work_plan {
  std::optional<backend_work> call; ///< a backend call,
  std::function<caf::error()> here; ///< or work on the actor thread; neither: nothing
};

} // namespace berth
