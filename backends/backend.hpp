#pragma once

#include <string>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "core/volume_record.hpp"

namespace berth {

/// The storage side of a volume. Plain blocking calls, no actors inside: the
/// volume actor runs them on the executor, never on an actor thread.
/// Every call is idempotent, and every error names the bad input.
class backend {
public:
  virtual ~backend() = default;

  /// The name volumes refer to in volume_record::backend, e.g. "local".
  virtual std::string name() const = 0;

  /// Checks options against the allow-list; no side effects.
  virtual caf::error validate(const std::string& volume, const option_map& options) const = 0;

  /// Prepares storage for a new volume (a directory under the state root).
  virtual caf::error create(const volume_record& rec) = 0;

  /// Mounts the volume on the host; returns the mountpoint. Already mounted is success.
  virtual caf::expected<std::string> mount(const volume_record& rec) = 0;

  /// Unmounts the volume. "Not mounted" counts as success. With `lazy` the
  /// mount is detached (MNT_DETACH), which never waits for a dead server.
  virtual caf::error unmount(const volume_record& rec, bool lazy) = 0;

  /// Deletes the volume's storage. The caller has unmounted it.
  virtual caf::error remove(const volume_record& rec) = 0;

  /// Where the volume is (or would be) mounted on the host.
  virtual std::string mountpoint(const volume_record& rec) const = 0;
};

} // namespace berth
