#pragma once

// The transition rules of one volume as plain functions on plain records, so
// they are unit-tested without actors (docs/design.md, "Mount at the first Mount,
// unmount at the last" and "One count per mount ID").

#include <string>

#include <caf/error.hpp>

#include "actors/release_rules.hpp"
#include "core/volume_record.hpp"

namespace berth {

/// ec::not_found "no such volume: NAME", with " (WHY)" when `why` says more (a
/// snapshot's name where a volume belongs): the one wording every refusal of an absent
/// volume uses, whether the registry or the volume's actor refuses.
caf::error no_such_volume(const std::string& name, const std::string& why = {});

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

/// Empty when a Mount of `id` may be counted. A snapshot is never mounted (not found).
/// A new ID beyond limits::max_mount_ids distinct IDs is ec::out_of_range (the
/// record's size stays bounded); another Mount of an ID already counted always may.
caf::error check_mount(const volume_record& rec, const std::string& id);

/// What one Mount did to the record.
struct mount_effect {
  mount_action action = mount_action::count_only;
  uint32_t count = 0;    ///< the ID's count after it
  uint32_t replaced = 0; ///< counts of an older dockerd dropped instead of added to
};

/// Counts one Mount of `id` from dockerd `mounter` ("" when not a dockerd berth
/// identified) at `now` into `next` (a copy of the committed record), and records
/// the ID's origin (count_mount: a Mount from another dockerd than the one that made
/// the counts replaces them). The origin's last_mounted_ms always moves forward,
/// even within one millisecond or when the clock steps back, so a release decided
/// on the origin before this Mount (mount_release::if_unchanged) sees that it came.
mount_effect apply_mount(volume_record& next, const std::string& id, const dockerd_key& mounter,
                         release_clock::time_point now);

/// Uncounts one Mount of `id` from `next`; its origin goes with its last count.
unmount_action apply_unmount(volume_record& next, const std::string& id);

/// Drops the whole count of `id` and its origin from `next` (a release); returns the
/// count dropped (0: not counted).
uint32_t drop_mount_id(volume_record& next, const std::string& id);

/// "; 2 count(s) of an older dockerd replaced" when a Mount replaced some, else "".
std::string replaced_part(uint32_t replaced);

/// The log lines of a Mount that only raised a count (`next`: the record after it), of an
/// Unmount that only lowered one, and of an Unmount of an ID not counted.
std::string mount_counted_line(const volume_record& next, const std::string& id,
                               const mount_effect& effect);
std::string unmount_counted_line(const volume_record& next, const std::string& id);
std::string unknown_unmount_line(const volume_record& rec, const std::string& id);

/// Marks `next` mounted at `mountpoint` / unmounted.
void set_mounted(volume_record& next, const std::string& mountpoint);
void set_unmounted(volume_record& next);

/// Empty when Remove may proceed; `ec::in_use` naming the mount IDs, the staging
/// path or a published target otherwise.
caf::error check_remove(const volume_record& rec);

/// Empty when a Create with `options` matches the existing record (idempotent);
/// `ec::already_exists` naming the difference otherwise.
caf::error check_recreate(const volume_record& rec, const option_map& options);

/// Empty when a request from namespace `asker` (record_owner::docker or record_owner::csi) may act
/// on the existing record `rec` (docs/design.md, "Only what berth owns"). Another
/// namespace's record is `ec::not_found` to it; to a create (`creates`) the taken
/// name is `ec::already_exists`, saying whose it is.
caf::error check_owner(const volume_record& rec, record_owner asker, bool creates);

/// "c89a…:2, d1e2…:1" for logs and messages.
std::string describe_mounts(const volume_record& rec);

} // namespace berth
