#include "actors/registry.hpp"

#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "core/names.hpp"

namespace berth {

namespace {

using self_ptr = registry_actor::stateful_pointer<registry_state>;

caf::error no_such_volume(const std::string& name) {
  return make_error(ec::not_found, "no such volume: " + name);
}

caf::error bad_name(const std::string& name) {
  return make_error(ec::invalid_argument, "invalid volume name \"" + name
                                            + "\": must match [A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
}

volume_actor spawn_volume(self_ptr self, volume_record rec, bool exists) {
  auto& cfg = self->state.cfg;
  volume_env env;
  auto it = cfg.backends.find(rec.backend);
  env.storage = it != cfg.backends.end() ? it->second : cfg.backends.at(cfg.default_backend);
  env.exec = cfg.exec;
  env.persistence = cfg.persistence;
  env.backend_timeout = cfg.backend_timeout;
  return self->spawn(volume, std::move(env), std::move(rec), exists);
}

/// The actor of a created (or being created) volume, or nullptr.
registry_entry* find(self_ptr self, const std::string& name) {
  auto it = self->state.volumes.find(name);
  if (it == self->state.volumes.end()) {
    return nullptr;
  }
  if (!it->second.created && it->second.pending_creates == 0) {
    return nullptr;
  }
  return &it->second;
}

/// Drops a name whose actor holds no volume and no pending creation.
void forget_if_unused(self_ptr self, const std::string& name, const volume_actor& hdl) {
  auto it = self->state.volumes.find(name);
  if (it == self->state.volumes.end() || it->second.hdl != hdl) {
    return;
  }
  if (it->second.created || it->second.pending_creates > 0) {
    return;
  }
  // Same sender, FIFO: retire arrives after everything already delegated to it.
  self->send(hdl, atom::retire_v);
  self->state.volumes.erase(it);
}

caf::result<atom::ok> create(self_ptr self, const std::string& name, option_map& options) {
  if (!is_valid_volume_name(name)) {
    return bad_name(name);
  }
  auto& cfg = self->state.cfg;
  auto& storage = cfg.backends.at(cfg.default_backend);
  if (auto err = storage->validate(name, options)) {
    return err;
  }
  auto& entry = self->state.volumes[name];
  if (!entry.hdl) {
    volume_record rec;
    rec.name = name;
    rec.backend = storage->name();
    entry.hdl = spawn_volume(self, std::move(rec), false);
  }
  ++entry.pending_creates;
  auto hdl = entry.hdl;
  auto rp = self->make_response_promise<atom::ok>();
  self->request(hdl, caf::infinite, atom::create_v, std::move(options))
    .then(
      [self, name, hdl, rp](atom::ok) mutable {
        auto it = self->state.volumes.find(name);
        if (it != self->state.volumes.end() && it->second.hdl == hdl) {
          --it->second.pending_creates;
          it->second.created = true;
        }
        rp.deliver(atom::ok_v);
      },
      [self, name, hdl, rp](caf::error& err) mutable {
        auto it = self->state.volumes.find(name);
        if (it != self->state.volumes.end() && it->second.hdl == hdl) {
          --it->second.pending_creates;
        }
        forget_if_unused(self, name, hdl);
        rp.deliver(err);
      });
  return rp;
}

caf::result<atom::ok> remove(self_ptr self, const std::string& name) {
  auto entry = find(self, name);
  if (entry == nullptr) {
    return no_such_volume(name);
  }
  auto hdl = entry->hdl;
  auto rp = self->make_response_promise<atom::ok>();
  self->request(hdl, caf::infinite, atom::remove_v)
    .then(
      [self, name, hdl, rp](atom::ok) mutable {
        auto it = self->state.volumes.find(name);
        if (it != self->state.volumes.end() && it->second.hdl == hdl) {
          it->second.created = false;
        }
        forget_if_unused(self, name, hdl);
        rp.deliver(atom::ok_v);
      },
      [rp](caf::error& err) mutable { rp.deliver(err); });
  return rp;
}

/// Asks every volume for `msg`, collecting what each answers.
caf::result<std::vector<volume_record>> list(self_ptr self) {
  auto rp = self->make_response_promise<std::vector<volume_record>>();
  auto out = std::make_shared<std::map<std::string, volume_record>>();
  auto left = std::make_shared<size_t>(0);
  for (auto& [name, entry] : self->state.volumes) {
    if (entry.created) {
      ++*left;
    }
  }
  if (*left == 0) {
    rp.deliver(std::vector<volume_record>{});
    return rp;
  }
  auto settle = [out, left, rp]() mutable {
    if (--*left == 0) {
      std::vector<volume_record> all;
      all.reserve(out->size());
      for (auto& [name, rec] : *out) {
        all.push_back(std::move(rec));
      }
      rp.deliver(std::move(all));
    }
  };
  for (auto& [name, entry] : self->state.volumes) {
    if (!entry.created) {
      continue;
    }
    self->request(entry.hdl, caf::infinite, atom::get_v)
      .then([out, settle](volume_record& rec) mutable {
              auto key = rec.name;
              out->emplace(std::move(key), std::move(rec));
              settle();
            },
            [settle](caf::error&) mutable { settle(); });
  }
  return rp;
}

caf::result<atom::ok> drain(self_ptr self) {
  auto rp = self->make_response_promise<atom::ok>();
  auto left = std::make_shared<size_t>(self->state.volumes.size() + 1);
  auto settle = [left, rp]() mutable {
    if (--*left == 0) {
      rp.deliver(atom::ok_v);
    }
  };
  for (auto& [name, entry] : self->state.volumes) {
    self->request(entry.hdl, caf::infinite, atom::drain_v)
      .then([settle](atom::ok) mutable { settle(); },
            [settle](caf::error&) mutable { settle(); });
  }
  settle();
  return rp;
}

} // namespace

registry_actor::behavior_type registry(registry_actor::stateful_pointer<registry_state> self,
                                       registry_config cfg, std::vector<volume_record> initial) {
  self->state.cfg = std::move(cfg);
  for (auto& rec : initial) {
    auto name = rec.name;
    auto& entry = self->state.volumes[name];
    entry.hdl = spawn_volume(self, std::move(rec), true);
    entry.created = true;
  }
  // Volumes are not linked (one failing volume must not take the registry down), so the
  // registry stops them itself; otherwise the actor system would wait for them forever.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    for (auto& [name, entry] : self->state.volumes) {
      self->send_exit(entry.hdl, msg.reason);
    }
    self->quit(msg.reason);
  });
  spdlog::info("registry serving {} volume(s)", self->state.volumes.size());
  return {
    [self](atom::create, const std::string& name, option_map& options) {
      return create(self, name, options);
    },
    [self](atom::mount, const std::string& name,
           std::string& id) -> caf::result<std::string> {
      auto entry = find(self, name);
      if (entry == nullptr) {
        return no_such_volume(name);
      }
      return self->delegate(entry->hdl, atom::mount_v, std::move(id));
    },
    [self](atom::unmount, const std::string& name,
           std::string& id) -> caf::result<atom::ok> {
      auto entry = find(self, name);
      if (entry == nullptr) {
        return no_such_volume(name);
      }
      return self->delegate(entry->hdl, atom::unmount_v, std::move(id));
    },
    [self](atom::remove, const std::string& name) { return remove(self, name); },
    [self](atom::get, const std::string& name) -> caf::result<volume_record> {
      auto entry = find(self, name);
      if (entry == nullptr) {
        return no_such_volume(name);
      }
      return self->delegate(entry->hdl, atom::get_v);
    },
    [self](atom::list) { return list(self); },
    [self](atom::drain) { return drain(self); },
  };
}

} // namespace berth
