#pragma once

#include <string>

#include <caf/error.hpp>

namespace berth {

/// An exclusive flock on STATE/berthd.lock, held for the life of the process,
/// so two berthd never serve one state directory (two journals, double mounts).
class state_lock {
public:
  state_lock() = default;
  ~state_lock();
  state_lock(const state_lock&) = delete;
  state_lock& operator=(const state_lock&) = delete;

  /// Takes the lock; an error names the directory when another process holds it.
  caf::error acquire(const std::string& state_dir);

private:
  int fd_ = -1;
};

} // namespace berth
