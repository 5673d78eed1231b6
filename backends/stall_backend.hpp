#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "backends/backend.hpp"

namespace berth {

/// TEST ONLY (berthd --test-stall-volume): wraps a backend and sleeps `stall`
/// before every mount and unmount of some volumes, to show that stalled volumes
/// do not slow the others. It also counts how many calls of each volume run at
/// once, which must never exceed one (docs/design.md, "A hung call blocks only its
/// own volume"). Everything else passes straight through.
class stall_backend : public backend {
public:
  /// @param inner the real backend, owned.
  /// @param volumes the volumes whose mount/unmount stalls.
  stall_backend(std::unique_ptr<backend> inner, std::set<std::string> volumes,
                std::chrono::milliseconds stall);

  /// The most calls of `volume` that ever ran at the same time.
  int max_in_flight(const std::string& volume) const;

  /// How many calls of `volume` stalled.
  int stalled(const std::string& volume) const;

  /// Ends every stall now and for good (so a test can stop without hung threads).
  void release();

  // -- backend ---------------------------------------------------------------
  std::string name() const override;
  caf::error validate(const std::string& volume, const option_map& options) const override;
  caf::error create(const volume_record& rec) override;
  caf::expected<std::string> mount(const volume_record& rec) override;
  caf::error unmount(const volume_record& rec, bool lazy) override;
  caf::error remove(const volume_record& rec) override;
  std::string mountpoint(const volume_record& rec) const override;

private:
  /// Counts the call in flight for its lifetime; stalls first when its volume does.
  class call_guard;

  std::unique_ptr<backend> inner_;
  std::set<std::string> volumes_;
  std::chrono::milliseconds stall_;
  mutable std::mutex mtx_;
  std::condition_variable released_cv_;
  bool released_ = false;
  std::map<std::string, int> in_flight_, max_in_flight_, stalled_;
};

} // namespace berth
