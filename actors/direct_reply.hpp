#pragma once

// How a volume answers. A request from an actor (the registry, a gateway) is answered
// through CAF's response promise, to its sender. A request sent straight to the volume
// from a thread that is no actor (an adapter's io thread, docs/design.md, "Three hops")
// carries its answer as a callback instead, which the volume calls on its own thread:
// no actor stands between the adapter and the volume, either way.

#include <exception>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <variant>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/result.hpp>
#include <caf/typed_response_promise.hpp>
#include <spdlog/spdlog.h>

namespace berth {

/// The answer of a request sent straight to a volume: called once, with the result or
/// the error. When the request is dropped unanswered (it reached an actor that had
/// already quit, whose closed mailbox destroys it), `dropped` runs instead, on the
/// thread that dropped it: the volume never saw the request, so the adapter may ask
/// again through the registry.
template <class R>
class direct_reply {
public:
  using on_answer = std::function<void(caf::expected<R>)>;

  direct_reply() = default;
  direct_reply(on_answer answer, std::function<void()> dropped)
      : st_(std::make_shared<state>(std::move(answer), std::move(dropped))) {}

  /// Calls the answer; an exception from it is logged, never thrown into the volume.
  void deliver(caf::expected<R> x) const {
    if (!st_ || st_->answered) {
      return;
    }
    st_->answered = true;
    try {
      st_->answer(std::move(x));
    } catch (const std::exception& e) {
      spdlog::error("a volume's direct answer failed: {}", e.what());
    }
  }

private:
  struct state {
    state(on_answer a, std::function<void()> d) : answer(std::move(a)), dropped(std::move(d)) {}
    state(const state&) = delete;
    state& operator=(const state&) = delete;

    on_answer answer;
    std::function<void()> dropped;
    // Read only by the destructor of the last copy, which shared_ptr orders after
    // every deliver.
    bool answered = false;

    ~state() {
      if (answered || !dropped) {
        return;
      }
      try {
        dropped();
      } catch (const std::exception& e) {
        spdlog::error("asking again for a dropped request failed: {}", e.what());
      }
    }
  };

  std::shared_ptr<state> st_;
};

/// Where a volume's answer goes: its sender's response promise, or a direct_reply.
/// Delivering anything but an R or an error does not compile.
template <class R>
class reply_to {
public:
  reply_to(caf::typed_response_promise<R> rp) : to_(std::move(rp)) {}
  reply_to(direct_reply<R> reply) : to_(std::move(reply)) {}

  void deliver(R x) {
    if (auto* rp = std::get_if<caf::typed_response_promise<R>>(&to_)) {
      rp->deliver(std::move(x));
    } else {
      std::get<direct_reply<R>>(to_).deliver(std::move(x));
    }
  }

  void deliver(caf::error err) {
    if (auto* rp = std::get_if<caf::typed_response_promise<R>>(&to_)) {
      rp->deliver(std::move(err));
    } else {
      std::get<direct_reply<R>>(to_).deliver(std::move(err));
    }
  }

private:
  std::variant<caf::typed_response_promise<R>, direct_reply<R>> to_;
};

/// The answer of a handler that answers its sender later: runs `op` with a reply_to that
/// holds the sender's response promise, and returns that promise to CAF as the result.
template <class R, class Self, class Op>
caf::result<R> to_sender(Self* self, Op op) {
  auto rp = self->template make_response_promise<R>();
  op(reply_to<R>{rp});
  return rp;
}

} // namespace berth

// A callback never leaves the process: it needs no serialization.
namespace caf {
template <class R>
struct allowed_unsafe_message_type<berth::direct_reply<R>> : std::true_type {};
} // namespace caf
