#include "actors/volume_handles.hpp"

#include <mutex>

namespace berth {

void volume_handles::put(const std::string& name, const volume_actor& hdl) {
  std::unique_lock lock{mtx_};
  actors_[name] = hdl;
}

void volume_handles::erase(const std::string& name) {
  std::unique_lock lock{mtx_};
  actors_.erase(name);
}

volume_actor volume_handles::find(const std::string& name) const {
  std::shared_lock lock{mtx_};
  auto it = actors_.find(name);
  return it != actors_.end() ? it->second : volume_actor{};
}

} // namespace berth
