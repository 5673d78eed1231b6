#pragma once

// Names to volume actors, readable by any thread: the registry writes it as it creates
// and removes names (it still serializes both), and an adapter reads it to send a Mount or
// an Unmount straight to the volume (docs/design.md, "Three hops").

#include <functional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include <caf/send.hpp>

#include "actors/actors.hpp"

namespace berth {

class volume_handles {
public:
  /// `name` is a created volume served by `hdl`.
  void put(const std::string& name, const volume_actor& hdl);

  /// `name` holds no created volume any more.
  void erase(const std::string& name);

  /// The actor of created volume `name`; an invalid handle when there is none, or while
  /// it is being created or removed: then only the registry knows what to answer.
  volume_actor find(const std::string& name) const;

private:
  mutable std::shared_mutex mtx_;
  std::unordered_map<std::string, volume_actor> actors_;
};

/// Sends `op, xs...` from a thread that is no actor straight to the volume `name` when
/// `handles` (may be null) know it, with a direct_reply that calls `answer` on the volume's
/// thread; otherwise, and when the request is dropped because the actor had quit, runs
/// `via_registry`, which asks the registry instead (docs/design.md, "Three hops").
template <class R, class Op, class... Ts>
void send_to_volume(const volume_handles* handles, const std::string& name,
                    typename direct_reply<R>::on_answer answer, std::function<void()> via_registry,
                    Op op, Ts... xs) {
  auto hdl = handles != nullptr ? handles->find(name) : volume_actor{};
  if (!hdl) {
    via_registry();
    return;
  }
  caf::anon_send(hdl, op, std::move(xs)...,
                 direct_reply<R>{std::move(answer), std::move(via_registry)});
}

} // namespace berth
