#pragma once

// A registry that keeps records in a std::map: enough to drive the adapters.

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/actors.hpp"
#include "core/errors.hpp"

namespace berth::test {

struct fake_registry_state {
  static inline const char* name = "fake_registry";
  std::map<std::string, volume_record> volumes;
};

inline caf::error not_served() {
  return make_error(ec::unsupported, "the fake registry serves no CSI");
}

/// What the fake does with a modify (atom::modify, name, modify_request), shared with
/// the test: it records every request that reaches it, then answers `fail_with` when
/// set, else applies the request as a volume would (a larger size, the parameters
/// merged, one modification when anything changed) and returns the record.
struct fake_modify {
  std::mutex mtx;
  std::vector<std::pair<std::string, modify_request>> received;
  caf::error fail_with;

  /// What reached the registry so far.
  std::vector<std::pair<std::string, modify_request>> requests() {
    std::lock_guard<std::mutex> guard{mtx};
    return received;
  }
};

/// The fake registry; with `modifying` (may be null: modify is not_served()) it
/// serves modify as fake_modify says.
inline registry_actor::behavior_type
fake_registry_with(registry_actor::stateful_pointer<fake_registry_state> self,
                   std::string created_at, std::shared_ptr<fake_modify> modifying) {
  auto find = [self](const std::string& name) -> volume_record* {
    auto it = self->state.volumes.find(name);
    return it == self->state.volumes.end() ? nullptr : &it->second;
  };
  auto missing = [](const std::string& name) {
    return make_error(ec::not_found, "no volume named \"" + name + "\"");
  };
  /// Removes `name` (only a record of `owner` and `kind`, when given); refused while mounted.
  auto remove = [self, find, missing](const std::string& name, record_owner owner,
                                      record_kind kind) -> caf::expected<atom::ok> {
    auto* rec = find(name);
    if (!rec || owner_of(*rec) != owner || rec->kind != kind) {
      return missing(name);
    }
    if (!rec->mounts.empty()) {
      return make_error(ec::in_use, "volume \"" + name + "\" is in use");
    }
    self->state.volumes.erase(name);
    return atom::ok_v;
  };
  auto create_docker = [self, find, created_at](const std::string& name,
                                                option_map& opts) -> caf::expected<atom::ok> {
    if (auto* rec = find(name)) {
      if (rec->options != opts) {
        return make_error(ec::already_exists, "volume \"" + name + "\" exists with other options");
      }
      return atom::ok_v;
    }
    volume_record rec;
    rec.name = name;
    rec.options = std::move(opts);
    rec.owner = record_owner::docker;
    rec.created_at = created_at;
    self->state.volumes.emplace(name, std::move(rec));
    return atom::ok_v;
  };
  /// A CSI create only records the name and kind (Docker tests seed snapshots with it).
  auto create_csi = [self](const std::string& name, const volume_spec& spec) {
    volume_record rec;
    rec.name = name;
    rec.kind = spec.kind;
    rec.owner = spec.owner;
    rec.source = spec.source;
    rec.backend = spec.backend;
    self->state.volumes[name] = rec;
    return rec;
  };
  return {
    [create_docker](atom::create, std::string& name, option_map& opts) -> caf::result<atom::ok> {
      return create_docker(name, opts);
    },
    [create_docker](atom::create, std::string& name, option_map& opts,
                    direct_reply<atom::ok>& reply) { reply.deliver(create_docker(name, opts)); },
    [find, missing](atom::mount, std::string& name, std::string& id, std::string& dockerd,
                    caller&) -> caf::result<std::string> {
      auto* rec = find(name);
      if (!rec) {
        return missing(name);
      }
      ++rec->mounts[id];
      rec->origins[id].dockerd = dockerd; // what the adapter sent, for the test to read
      rec->mounted = true;
      rec->mountpoint = "/mnt/berth/" + name;
      return rec->mountpoint;
    },
    [find, missing](atom::release, std::string& name, mount_release& r) -> caf::result<uint32_t> {
      // As a volume does, without the origin check: drops the ID's whole count.
      auto* rec = find(name);
      if (!rec) {
        return missing(name);
      }
      auto it = rec->mounts.find(r.id);
      if (it == rec->mounts.end()) {
        if (r.if_unchanged) {
          return uint32_t{0};
        }
        return make_error(ec::not_found, "volume " + name + " counts no mount ID " + r.id);
      }
      auto dropped = it->second;
      rec->mounts.erase(it);
      rec->origins.erase(r.id);
      if (rec->mounts.empty()) {
        rec->mounted = false;
        rec->mountpoint.clear();
      }
      return dropped;
    },
    [find, missing](atom::unmount, std::string& name, std::string& id) -> caf::result<atom::ok> {
      auto* rec = find(name);
      if (!rec) {
        return missing(name);
      }
      auto it = rec->mounts.find(id);
      if (it == rec->mounts.end()) {
        return make_error(ec::invalid_argument,
                          "volume \"" + name + "\" is not mounted by \"" + id + "\"");
      }
      if (--it->second == 0) {
        rec->mounts.erase(it);
        rec->origins.erase(id);
      }
      if (rec->mounts.empty()) {
        rec->mounted = false;
        rec->mountpoint.clear();
      }
      return atom::ok_v;
    },
    [remove](atom::remove, std::string& name, record_owner owner,
             record_kind kind) -> caf::result<atom::ok> { return remove(name, owner, kind); },
    [remove](atom::remove, std::string& name, record_owner owner, record_kind kind,
             direct_reply<atom::ok>& reply) { reply.deliver(remove(name, owner, kind)); },
    [find, missing](atom::get, std::string& name) -> caf::result<volume_record> {
      auto* rec = find(name);
      if (!rec) {
        return missing(name);
      }
      return *rec;
    },
    [find, missing](atom::get, std::string& name,
                    record_owner owner) -> caf::result<volume_record> {
      auto* rec = find(name);
      if (!rec || owner_of(*rec) != owner) {
        return missing(name);
      }
      return *rec;
    },
    [self](atom::list) {
      std::vector<volume_record> out;
      for (const auto& [name, rec] : self->state.volumes) {
        out.push_back(rec);
      }
      return share(std::move(out));
    },
    [self](atom::list, record_owner owner) {
      std::vector<volume_record> out;
      for (const auto& [name, rec] : self->state.volumes) {
        if (owner_of(rec) == owner) {
          out.push_back(rec);
        }
      }
      return share(std::move(out));
    },
    [](atom::drain) { return atom::ok_v; },
    [](atom::ping) { return atom::ok_v; },
    [create_csi](atom::create, std::string& name, volume_spec& spec) -> caf::result<volume_record> {
      return create_csi(name, spec);
    },
    [create_csi](atom::create, std::string& name, volume_spec& spec,
                 direct_reply<volume_record>& reply) { reply.deliver(create_csi(name, spec)); },
    // The rest of CSI is not what the Docker and admin tests exercise: refused plainly.
    [](atom::stage, std::string&, stage_request&) -> caf::result<atom::ok> { return not_served(); },
    [](atom::unstage, std::string&, std::string&) -> caf::result<atom::ok> { return not_served(); },
    [](atom::publish, std::string&, publish_request&) -> caf::result<atom::ok> {
      return not_served();
    },
    [](atom::unpublish, std::string&, std::string&) -> caf::result<atom::ok> {
      return not_served();
    },
    [find, missing, modifying](atom::modify, std::string& name,
                               modify_request& req) -> caf::result<volume_record> {
      if (!modifying) {
        return not_served();
      }
      std::lock_guard<std::mutex> guard{modifying->mtx};
      modifying->received.emplace_back(name, req);
      if (modifying->fail_with) {
        return modifying->fail_with;
      }
      auto* rec = find(name);
      if (!rec || (req.owner != record_owner::unset && owner_of(*rec) != req.owner)) {
        return missing(name);
      }
      bool changed = req.required_bytes > rec->capacity_bytes;
      rec->capacity_bytes = std::max(rec->capacity_bytes, req.required_bytes);
      for (auto& [key, value] : req.parameters) {
        auto& slot = rec->mutable_parameters[key];
        changed = changed || slot != value;
        slot = value;
      }
      rec->modifications += changed ? 1 : 0;
      return *rec;
    },
    // Export and import stream through admin_transfers, tested against the real registry.
    [](atom::import_check, std::string&, option_map&) -> caf::result<atom::ok> {
      return not_served();
    },
    [](atom::create, std::string&, option_map&, std::string&) -> caf::result<atom::ok> {
      return not_served();
    },
    [](atom::export_open, std::string&, std::string&, export_form) -> caf::result<export_view> {
      return not_served();
    },
    [](atom::export_close, std::string&, std::string&) -> caf::result<atom::ok> {
      return not_served();
    },
    [](atom::import_delta, std::string&, std::string&, volume_record&) -> caf::result<atom::ok> {
      return not_served();
    },
    [](atom::grow, std::string&, std::string&) -> caf::result<uint64_t> { return not_served(); },
    [](atom::stats, std::string&, std::string&) -> caf::result<volume_stats> {
      return not_served();
    },
  };
}

/// The fake registry whose modify is not_served().
inline registry_actor::behavior_type
fake_registry(registry_actor::stateful_pointer<fake_registry_state> self, std::string created_at) {
  // (created_at is also a spawn argument because CAF 0.17 trips UBSan when a
  // function actor is spawned without arguments.)
  return fake_registry_with(self, std::move(created_at), nullptr);
}

} // namespace berth::test
