#pragma once

// The coalescing window of one volume (docs/design.md, "Expand and modify coalesce into
// one call"), as a plain state machine: requests merge into the open window, and when it
// closes its merged change becomes one backend modify call whose outcome every merged
// caller gets. Windows are numbered, so a close meant for a window that already closed
// (early, at a drain) does nothing. The driver (actors/volume_mailbox.cpp) checks a
// request against modify_rules before it merges, schedules the close of a window that
// opened, and carries out the batch that close() gives. `Waiter` is how a caller is
// answered: the driver's response promise; a test's plain value.

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "actors/modify_rules.hpp"

namespace berth {

template <class Waiter>
class coalescing_window {
public:
  /// What a closed window asks for, and who waits for it.
  struct batch {
    uint64_t number = 0;
    modification change;
    std::vector<Waiter> waiters;
  };

  /// A window is open.
  bool is_open() const { return open_.number != 0; }

  /// The number of the open window (0: none).
  uint64_t number() const { return open_.number; }

  /// The change merged in the open window (empty when none is open).
  const modification& change() const { return open_.change; }

  /// Merges `wanted` (check_conflict agreed) and its caller into the open window, or
  /// opens one. Returns the number of the window it opened, whose close the driver
  /// schedules; 0 when it merged into the open one.
  uint64_t merge(const modification& wanted, Waiter waiter) {
    uint64_t opened = 0;
    if (!is_open()) {
      opened = open_.number = next_++;
    }
    merge_into(open_.change, wanted);
    open_.waiters.push_back(std::move(waiter));
    return opened;
  }

  /// Window `number` closes: its batch, or none when that window is not the open one
  /// (it closed already).
  std::optional<batch> close(uint64_t number) {
    if (number == 0 || number != open_.number) {
      return std::nullopt;
    }
    return std::exchange(open_, batch{});
  }

  /// The volume retires: the open window's callers, whom the driver refuses.
  std::vector<Waiter> take_waiters() { return std::exchange(open_, batch{}).waiters; }

private:
  batch open_; ///< number 0: none is open
  uint64_t next_ = 1;
};

} // namespace berth
