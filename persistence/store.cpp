#include "persistence/store.hpp"

namespace berth {

shared_state share(state_snapshot&& state) {
  shared_state out;
  out.boot_id = std::move(state.boot_id);
  for (auto& [name, rec] : state.volumes) {
    out.volumes.emplace_hint(out.volumes.end(), name,
                             std::make_shared<const volume_record>(std::move(rec)));
  }
  state.volumes.clear();
  return out;
}

state_snapshot copy_of(const shared_state& state) {
  state_snapshot out;
  out.boot_id = state.boot_id;
  for (const auto& [name, rec] : state.volumes) {
    out.volumes.emplace_hint(out.volumes.end(), name, *rec);
  }
  return out;
}

} // namespace berth
