#pragma once

// Names to volume actors, readable by any thread: the registry writes it as it creates
// and removes names (it still serializes both), and an adapter reads it to send a Mount or
// an Unmount straight to the volume (docs/design.md, "Three hops").

#include <shared_mutex>
#include <string>
#include <unordered_map>

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

} // namespace berth
