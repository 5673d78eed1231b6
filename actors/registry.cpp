#include "actors/registry.hpp"

#include <algorithm>

#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/registry_ops.hpp"
#include "actors/volume_rules.hpp"
#include "core/errors.hpp"
#include "core/names.hpp"
#include "persistence/recovery/reconcile.hpp"

namespace berth {

namespace registry_detail {

caf::error bad_name(const std::string& name) {
  return make_error(ec::invalid_argument, invalid_name_message("volume", name));
}

namespace {

/// The environment every volume of this registry gets.
volume_env env_of(self_ptr self, const volume_record& rec) {
  auto& cfg = self->state.cfg;
  volume_env env;
  env.storage = storage_of(cfg, rec);
  env.exec = cfg.exec;
  env.persistence = cfg.persistence;
  env.backend_timeout = cfg.backend_timeout;
  env.coalesce_window = cfg.coalesce_window;
  env.timer = cfg.timer;
  env.stats = cfg.stats;
  env.directory = cfg.directory;
  return env;
}

} // namespace

const std::shared_ptr<backend>& storage_of(const registry_config& cfg, const volume_record& rec) {
  auto it = cfg.backends.find(rec.backend);
  return it != cfg.backends.end() ? it->second : cfg.backends.at(cfg.default_backend);
}

volume_actor spawn_volume(self_ptr self, std::shared_ptr<const volume_record> rec, bool exists) {
  auto env = env_of(self, *rec);
  if (exists) {
    env.reconcile_with = self->state.cfg.host_mounts;
  }
  return self->spawn(volume, std::move(env), std::move(rec), exists);
}

void wake(self_ptr self, const std::string& name, registry_entry& entry) {
  auto env = env_of(self, *entry.dormant);
  env.counted = self->state.cfg.stats != nullptr; // the registry counted it when it loaded
  entry.hdl = self->spawn(volume, std::move(env), std::move(entry.dormant), true);
  entry.dormant = nullptr;
  self->state.cfg.handles->put(name, entry.hdl);
}

/// The entry of a created (or being created) volume, with its actor (a dormant one is
/// woken), or nullptr.
registry_entry* find(self_ptr self, const std::string& name) {
  auto it = self->state.volumes.find(name);
  if (it == self->state.volumes.end()) {
    return nullptr;
  }
  if (!it->second.created && it->second.pending_creates == 0) {
    return nullptr;
  }
  if (it->second.dormant) {
    wake(self, name, it->second);
  }
  return &it->second;
}

/// True when `name` is still `hdl`'s and it holds no volume and no pending creation.
bool is_unused(self_ptr self, const std::string& name, const volume_actor& hdl) {
  auto it = self->state.volumes.find(name);
  return it != self->state.volumes.end() && it->second.hdl == hdl && !it->second.created
         && it->second.pending_creates == 0;
}

/// Drops a name whose actor holds no volume and no pending creation, once the actor has
/// settled: while one of its backend calls hangs the name keeps its actor, so a
/// re-create meets the hung call there instead of starting a second one in a fresh
/// actor (docs/design.md, "A hung call blocks only its own volume").
void forget_if_unused(self_ptr self, const std::string& name, const volume_actor& hdl) {
  if (!is_unused(self, name, hdl)) {
    return;
  }
  auto retire_if_unused = [self, name, hdl] {
    if (!is_unused(self, name, hdl)) {
      return; // created again meanwhile: the actor serves on
    }
    // Same sender, FIFO: retire arrives after everything already delegated to it.
    self->send(hdl, atom::retire_v);
    self->state.volumes.erase(name);
  };
  self->request(hdl, caf::infinite, atom::settled_v)
    .then([retire_if_unused](atom::ok) { retire_if_unused(); },
          [retire_if_unused](caf::error&) { retire_if_unused(); });
}

} // namespace registry_detail

namespace {

using namespace registry_detail;

/// Hands a request for `name` to its volume actor, which answers the sender.
template <class Result, class... Ts>
caf::result<Result> forward(self_ptr self, const std::string& name, Ts&&... xs) {
  auto entry = find(self, name);
  if (entry == nullptr) {
    return no_such_volume(name);
  }
  return self->delegate(entry->hdl, std::forward<Ts>(xs)...);
}

/// Removes `name` if it is a record of `owner` and `kind`.
void remove(self_ptr self, const std::string& name, record_owner owner, record_kind kind,
            reply_to<atom::ok> rp) {
  auto entry = find(self, name);
  if (entry == nullptr) {
    rp.deliver(no_such_volume(name));
    return;
  }
  if (auto copies = self->state.copying.find(name); copies != self->state.copying.end()) {
    rp.deliver(make_error(
      ec::in_use,
      to_string(kind) + " " + name + " is being copied (" + std::to_string(copies->second)
        + " snapshot, clone or export of it in progress); remove it when that has finished"));
    return;
  }
  auto hdl = entry->hdl;
  self->request(hdl, caf::infinite, atom::remove_v, owner, kind)
    .then(
      [self, name, hdl, rp](atom::ok) mutable {
        auto it = self->state.volumes.find(name);
        if (it != self->state.volumes.end() && it->second.hdl == hdl) {
          it->second.created = false;
          self->state.cfg.handles->erase(name);
        }
        forget_if_unused(self, name, hdl);
        rp.deliver(atom::ok_v);
      },
      [rp](caf::error& err) mutable { rp.deliver(err); });
}

/// Every volume's committed record, sorted by name, from the directory the volumes keep
/// current; with an `owner`, only that owner's records.
shared_records list(self_ptr self, record_owner owner) {
  auto all = self->state.cfg.directory->all();
  if (owner != record_owner::unset) {
    all.erase(std::remove_if(all.begin(), all.end(),
                             [owner](const auto& rec) { return owner_of(*rec) != owner; }),
              all.end());
  }
  return all;
}

caf::result<atom::ok> drain(self_ptr self) {
  auto rp = self->make_response_promise<atom::ok>();
  auto left = std::make_shared<size_t>(1);
  auto settle = [left, rp]() mutable {
    if (--*left == 0) {
      rp.deliver(atom::ok_v);
    }
  };
  for (auto& [name, entry] : self->state.volumes) {
    if (!entry.hdl) {
      continue; // dormant: nothing of it runs
    }
    ++*left;
    self->request(entry.hdl, caf::infinite, atom::drain_v)
      .then([settle](atom::ok) mutable { settle(); },
            [settle](caf::error&) mutable { settle(); });
  }
  settle();
  return rp;
}


} // namespace

registry_actor::behavior_type registry(registry_actor::stateful_pointer<registry_state> self,
                                       registry_config cfg, shared_records initial) {
  self->state.cfg = std::move(cfg);
  const auto& kept = self->state.cfg;
  size_t dormant = 0;
  for (auto& rec : initial) {
    // Listed now, not once its actor first runs: a list right after start shows every
    // volume of the durable state, as it did when it asked each actor. The volume
    // commits this same record, so it is never copied.
    kept.directory->put(rec);
    auto name = rec->name;
    auto& entry = self->state.volumes[name];
    entry.created = true;
    const auto& storage = storage_of(kept, *rec);
    if (kept.host_mounts && reconciled_already(*rec, *storage, *kept.host_mounts)) {
      // Nothing to reconcile: no actor until it is asked for (docs/design.md, "Dormant
      // volumes"). Counted here, as its actor would when it starts.
      if (kept.stats) {
        kept.stats->volumes.replace(nullptr, rec.get());
      }
      entry.dormant = std::move(rec);
      ++dormant;
      continue;
    }
    entry.hdl = spawn_volume(self, std::move(rec), true);
    kept.handles->put(name, entry.hdl);
  }
  // Volumes are not linked (one failing volume must not take the registry down), so the
  // registry stops them itself; otherwise the actor system would wait for them forever.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    for (auto& [name, entry] : self->state.volumes) {
      if (entry.hdl) {
        self->send_exit(entry.hdl, msg.reason);
      }
    }
    self->quit(msg.reason);
  });
  spdlog::info("registry serving {} volume(s), {} of them dormant until first asked for",
               self->state.volumes.size(), dormant);
  return {
    [self](atom::create, const std::string& name, option_map& options) {
      return to_sender<atom::ok>(self, [&](reply_to<atom::ok> rp) {
        create_docker(self, name, std::move(options), std::move(rp));
      });
    },
    [self](atom::create, const std::string& name, option_map& options,
           direct_reply<atom::ok>& reply) {
      create_docker(self, name, std::move(options), std::move(reply));
    },
    [self](atom::import_check, const std::string& name,
           const option_map& options) -> caf::result<atom::ok> {
      if (auto checked = check_import(self, name, options); !checked) {
        return checked.error();
      }
      return atom::ok_v;
    },
    [self](atom::create, const std::string& name, option_map& options, const std::string& tree) {
      return create_import(self, name, options, tree);
    },
    [self](atom::export_open, const std::string& name, std::string& id, export_form form) {
      return open_export(self, name, std::move(id), form);
    },
    [self](atom::export_close, const std::string& name, std::string& id) {
      return close_export(self, name, std::move(id));
    },
    [self](atom::import_delta, const std::string& name, std::string& delta,
           volume_record& base) -> caf::result<atom::ok> {
      return forward<atom::ok>(self, name, atom::import_delta_v, std::move(delta), std::move(base));
    },
    [self](atom::mount, const std::string& name, std::string& id, std::string& dockerd,
           caller& from) -> caf::result<std::string> {
      return forward<std::string>(self, name, atom::mount_v, std::move(id), std::move(dockerd),
                                  std::move(from));
    },
    [self](atom::release, const std::string& name, mount_release& r) -> caf::result<uint32_t> {
      return forward<uint32_t>(self, name, atom::release_v, std::move(r));
    },
    [self](atom::unmount, const std::string& name, std::string& id) -> caf::result<atom::ok> {
      return forward<atom::ok>(self, name, atom::unmount_v, std::move(id));
    },
    [self](atom::remove, const std::string& name, record_owner owner, record_kind kind) {
      return to_sender<atom::ok>(
        self, [&](reply_to<atom::ok> rp) { remove(self, name, owner, kind, std::move(rp)); });
    },
    [self](atom::remove, const std::string& name, record_owner owner, record_kind kind,
           direct_reply<atom::ok>& reply) { remove(self, name, owner, kind, std::move(reply)); },
    [self](atom::get, const std::string& name) -> caf::result<volume_record> {
      return forward<volume_record>(self, name, atom::get_v);
    },
    [self](atom::get, const std::string& name, record_owner owner) -> caf::result<volume_record> {
      return forward<volume_record>(self, name, atom::get_v, owner);
    },
    [self](atom::list) { return list(self, record_owner::unset); },
    [self](atom::list, record_owner owner) { return list(self, owner); },
    // -- CSI ---------------------------------------------------------------------
    [self](atom::create, const std::string& name, volume_spec& spec) {
      return to_sender<volume_record>(self, [&](reply_to<volume_record> rp) {
        create_csi(self, name, std::move(spec), std::move(rp));
      });
    },
    [self](atom::create, const std::string& name, volume_spec& spec,
           direct_reply<volume_record>& reply) {
      create_csi(self, name, std::move(spec), std::move(reply));
    },
    [self](atom::stage, const std::string& name, stage_request& req) -> caf::result<atom::ok> {
      return forward<atom::ok>(self, name, atom::stage_v, std::move(req));
    },
    [self](atom::unstage, const std::string& name, std::string& path) -> caf::result<atom::ok> {
      return forward<atom::ok>(self, name, atom::unstage_v, std::move(path));
    },
    [self](atom::publish, const std::string& name, publish_request& req) -> caf::result<atom::ok> {
      return forward<atom::ok>(self, name, atom::publish_v, std::move(req));
    },
    [self](atom::unpublish, const std::string& name, std::string& target) -> caf::result<atom::ok> {
      return forward<atom::ok>(self, name, atom::unpublish_v, std::move(target));
    },
    [self](atom::modify, const std::string& name,
           modify_request& req) -> caf::result<volume_record> {
      return forward<volume_record>(self, name, atom::modify_v, std::move(req));
    },
    [self](atom::grow, const std::string& name, std::string& path) -> caf::result<uint64_t> {
      return forward<uint64_t>(self, name, atom::grow_v, std::move(path));
    },
    [self](atom::stats, const std::string& name, std::string& path) -> caf::result<volume_stats> {
      return forward<volume_stats>(self, name, atom::stats_v, std::move(path));
    },
    [self](atom::drain) { return drain(self); },
    [](atom::ping) { return atom::ok_v; },
  };
}

} // namespace berth
