#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace berth {

/// TEST ONLY (berthd --test-stall-volume): wraps a backend and sleeps `stall`
/// before every mount and unmount of one volume, to show that one stalled
/// volume does not slow the others. Everything else passes straight through.
class stall_backend : public backend {
public:
  /// @param inner the real backend, owned.
  /// @param volume the one volume whose mount/unmount stalls.
  stall_backend(std::unique_ptr<backend> inner, std::string volume,
                std::chrono::milliseconds stall);

  // -- backend ---------------------------------------------------------------
  std::string name() const override;
  caf::error validate(const std::string& volume, const option_map& options) const override;
  caf::error create(const volume_record& rec) override;
  caf::expected<std::string> mount(const volume_record& rec) override;
  caf::error unmount(const volume_record& rec, bool lazy) override;
  caf::error remove(const volume_record& rec) override;
  std::string mountpoint(const volume_record& rec) const override;

private:
  void maybe_stall(const volume_record& rec) const;

  std::unique_ptr<backend> inner_;
  std::string volume_;
  std::chrono::milliseconds stall_;
};

} // namespace berth
