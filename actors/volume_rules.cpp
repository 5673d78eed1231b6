#include "actors/volume_rules.hpp"

#include <algorithm>
#include <optional>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"

namespace berth {

caf::error no_such_volume(const std::string& name, const std::string& why) {
  return make_error(ec::not_found,
                    "no such volume: " + name + (why.empty() ? "" : " (" + why + ")"));
}

caf::error check_mount(const volume_record& rec, const std::string& id) {
  if (rec.kind != record_kind::volume) {
    // Docker's snapshots share its namespace; one is never mounted.
    return no_such_volume(rec.name, "it is a snapshot: make a volume of it with -o from-snapshot="
                                      + rec.name);
  }
  if (rec.mounts.count(id) > 0 || rec.mounts.size() < limits::max_mount_ids) {
    return {};
  }
  return make_error(ec::out_of_range,
                    "volume " + rec.name + " is already mounted by "
                      + std::to_string(rec.mounts.size()) + " mount IDs, the most one volume may "
                      "have; mount ID " + id.substr(0, 12) + " not counted (unmount unused ones)");
}

mount_effect apply_mount(volume_record& next, const std::string& id, const dockerd_key& mounter,
                         release_clock::time_point now) {
  std::optional<mount_id_state> existing;
  if (auto it = next.mounts.find(id); it != next.mounts.end()) {
    mount_id_state was;
    was.id = id;
    was.count = it->second;
    if (auto o = next.origins.find(id); o != next.origins.end()) {
      was.instance = o->second.dockerd;
      auto last = release_clock::time_point{std::chrono::milliseconds{o->second.last_mounted_ms}};
      was.last_mounted = last;
      // Strictly later than the last Mount: equal origins mean no Mount came between.
      now = std::max(now, last + std::chrono::milliseconds{1});
    }
    existing = std::move(was);
  }
  auto tagged = count_mount(existing, id, mounter, now);
  next.mounts[id] = tagged.next.count;
  next.origins[id] = origin_of(tagged.next);
  auto action = next.mounted ? mount_action::count_only : mount_action::mount_host;
  return mount_effect{action, tagged.next.count, tagged.replaced};
}

unmount_action apply_unmount(volume_record& next, const std::string& id) {
  auto it = next.mounts.find(id);
  if (it == next.mounts.end()) {
    return unmount_action::unknown_id;
  }
  if (--it->second == 0) {
    next.mounts.erase(it);
    next.origins.erase(id); // keys(origins) stay within keys(mounts)
  }
  if (total_mounts(next) > 0 || !next.mounted) {
    return unmount_action::count_only;
  }
  return unmount_action::unmount_host;
}

std::string replaced_part(uint32_t replaced) {
  if (replaced == 0) {
    return "";
  }
  return "; " + std::to_string(replaced) + " count(s) of an older dockerd replaced";
}

std::string mount_counted_line(const volume_record& next, const std::string& id,
                               const mount_effect& effect) {
  return "volume " + next.name + " mount counted (id " + short_id(id) + ", count "
    + std::to_string(effect.count) + replaced_part(effect.replaced) + ")";
}

std::string unmount_counted_line(const volume_record& next, const std::string& id) {
  return "volume " + next.name + " unmount counted (id " + short_id(id) + ", "
    + std::to_string(total_mounts(next)) + " mount(s) left)";
}

std::string unknown_unmount_line(const volume_record& rec, const std::string& id) {
  return "volume " + rec.name + ": unmount of unknown id " + short_id(id) + " ignored";
}

uint32_t drop_mount_id(volume_record& next, const std::string& id) {
  auto it = next.mounts.find(id);
  if (it == next.mounts.end()) {
    return 0;
  }
  auto dropped = it->second;
  next.mounts.erase(it);
  next.origins.erase(id);
  return dropped;
}

void set_mounted(volume_record& next, const std::string& mountpoint) {
  next.mounted = true;
  next.mountpoint = mountpoint;
}

void set_unmounted(volume_record& next) {
  next.mounted = false;
  next.mountpoint.clear();
}

caf::error check_remove(const volume_record& rec) {
  if (!rec.staging_path.empty()) {
    return make_error(ec::in_use, "volume in use: " + rec.name + " is staged at "
                                    + rec.staging_path);
  }
  if (!rec.published.empty()) {
    return make_error(ec::in_use, "volume in use: " + rec.name + " is published at "
                                    + rec.published.begin()->first);
  }
  if (total_mounts(rec) == 0) {
    return {};
  }
  return make_error(ec::in_use, "volume in use: " + rec.name + " is mounted by "
                                  + describe_mounts(rec));
}

caf::error check_recreate(const volume_record& rec, const option_map& options) {
  if (rec.options == options) {
    return {};
  }
  return make_error(ec::already_exists, "volume " + rec.name
                                          + " already exists with different options");
}

caf::error check_owner(const volume_record& rec, record_owner asker, bool creates) {
  auto owner = owner_of(rec);
  if (owner == asker) {
    return {};
  }
  if (!creates) {
    return no_such_volume(rec.name);
  }
  auto whose = owner == record_owner::csi ? "a CSI " + to_string(rec.kind) + " (Kubernetes)"
                                  : "a Docker volume";
  return make_error(ec::already_exists, "name " + rec.name + " is taken by " + whose
                                          + ", which " + to_string(asker)
                                          + " cannot use: choose another name");
}

std::string describe_mounts(const volume_record& rec) {
  std::string out;
  for (const auto& [id, n] : rec.mounts) {
    if (!out.empty()) {
      out += ", ";
    }
    out += id.substr(0, 12) + ":" + std::to_string(n);
  }
  return out.empty() ? "no mount ID" : out;
}

} // namespace berth
