#pragma once

// The transition rules of one volume as plain functions on plain records, so
// they are unit-tested without actors (DESIGN bugs 1 and 2).

#include <string>

#include <caf/error.hpp>

#include "core/volume_record.hpp"

namespace berth {

/// What a Mount needs besides counting.
enum class mount_action {
  count_only, ///< the host mount exists: only the count changes
  mount_host, ///< the first Mount: mount on the host, then count
};

/// What an Unmount needs besides uncounting.
enum class unmount_action {
  unknown_id,   ///< no Mount with that ID is counted: a logged no-op
  count_only,   ///< other Mounts remain: only the count changes
  unmount_host, ///< the last Mount: unmount on the host, then uncount
};

/// Empty when a Mount of `id` may be counted. A new ID beyond limits::max_mount_ids
/// distinct IDs is ec::out_of_range (the record's size stays bounded); another
/// Mount of an ID already counted always may.
caf::error check_mount(const volume_record& rec, const std::string& id);

/// Counts one Mount of `id` into `next` (a copy of the committed record).
mount_action apply_mount(volume_record& next, const std::string& id);

/// Uncounts one Mount of `id` from `next`.
unmount_action apply_unmount(volume_record& next, const std::string& id);

/// Marks `next` mounted at `mountpoint` / unmounted.
void set_mounted(volume_record& next, const std::string& mountpoint);
void set_unmounted(volume_record& next);

/// Empty when Remove may proceed; `ec::in_use` naming the mount IDs, the staging
/// path or a published target otherwise.
caf::error check_remove(const volume_record& rec);

/// Empty when a Create with `options` matches the existing record (idempotent);
/// `ec::already_exists` naming the difference otherwise.
caf::error check_recreate(const volume_record& rec, const option_map& options);

/// Empty when a request from namespace `asker` (owner_docker or owner_csi) may act
/// on the existing record `rec` (DESIGN bug 8). Another namespace's record is
/// `ec::not_found` to it; to a create (`creates`) the taken name is
/// `ec::already_exists`, saying whose it is.
caf::error check_owner(const volume_record& rec, const std::string& asker, bool creates);

/// "c89a…:2, d1e2…:1" for logs and messages.
std::string describe_mounts(const volume_record& rec);

} // namespace berth
