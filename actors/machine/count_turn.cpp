#include "actors/machine/count_turn.hpp"

#include <utility>

namespace berth {

count_turn::count_turn(volume_record before, release_clock::time_point now)
    : next_(std::move(before)), now_(now) {}

bool count_turn::admit(const count_change& change) {
  if (change.mount_by) {
    if (auto err = check_mount(next_, change.id)) {
      outcomes_.push_back({std::move(err), {}, false});
      return true;
    }
    auto after = next_;
    auto effect = apply_mount(after, change.id, *change.mount_by, now_);
    if (effect.action != mount_action::count_only) {
      return false;
    }
    next_ = std::move(after);
    changed_ = true;
    outcomes_.push_back({{}, mount_counted_line(next_, change.id, effect), true});
    return true;
  }
  auto after = next_;
  switch (apply_unmount(after, change.id)) {
    case unmount_action::unknown_id:
      outcomes_.push_back({{}, unknown_unmount_line(next_, change.id), false});
      return true;
    case unmount_action::count_only:
      next_ = std::move(after);
      changed_ = true;
      outcomes_.push_back({{}, unmount_counted_line(next_, change.id), true});
      return true;
    case unmount_action::unmount_host: break;
  }
  return false;
}

void count_turn::refuse(caf::error err) {
  outcomes_.push_back({std::move(err), {}, false});
}

} // namespace berth
