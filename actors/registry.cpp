#include "actors/registry.hpp"

#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/volume_rules.hpp"
#include "core/docker_source.hpp"
#include "core/errors.hpp"
#include "core/names.hpp"
#include "core/text.hpp"

namespace berth {

namespace {

using self_ptr = registry_actor::stateful_pointer<registry_state>;

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
  env.coalesce_window = cfg.coalesce_window;
  env.timer = cfg.timer;
  env.stats = cfg.stats;
  if (exists) {
    env.reconcile_with = cfg.host_mounts;
  }
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

/// Hands a request for `name` to its volume actor, which answers the sender.
template <class Result, class... Ts>
caf::result<Result> forward(self_ptr self, const std::string& name, Ts&&... xs) {
  auto entry = find(self, name);
  if (entry == nullptr) {
    return no_such_volume(name);
  }
  return self->delegate(entry->hdl, std::forward<Ts>(xs)...);
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

/// A copy of `source` (a snapshot or clone of it) ended: it may be removed again once
/// no other is in progress.
void end_copy(self_ptr self, const std::string& source) {
  auto it = self->state.copying.find(source);
  if (it != self->state.copying.end() && --it->second == 0) {
    self->state.copying.erase(it);
  }
}

/// Spawns (or reuses) the actor for `name` and asks it to create itself with `xs`,
/// delivering its answer to `rp`. Counts the pending creation so a concurrent
/// Remove or failed Create does not drop the name under it, and a copy of
/// `copying_from` ("": none) so its source is not removed under it.
template <class Result, class... Ts>
void create_entry(self_ptr self, const std::string& name, const std::string& backend_name,
                  const std::string& copying_from, caf::typed_response_promise<Result> rp,
                  Ts... xs) {
  if (!copying_from.empty()) {
    ++self->state.copying[copying_from];
  }
  auto& entry = self->state.volumes[name];
  if (!entry.hdl) {
    volume_record rec;
    rec.name = name;
    rec.backend = backend_name;
    entry.hdl = spawn_volume(self, std::move(rec), false);
  }
  ++entry.pending_creates;
  auto hdl = entry.hdl;
  self->request(hdl, caf::infinite, atom::create_v, std::move(xs)...)
    .then(
      [self, name, hdl, copying_from, rp](Result& out) mutable {
        end_copy(self, copying_from);
        auto it = self->state.volumes.find(name);
        if (it != self->state.volumes.end() && it->second.hdl == hdl) {
          --it->second.pending_creates;
          it->second.created = true;
        }
        rp.deliver(std::move(out));
      },
      [self, name, hdl, copying_from, rp](caf::error& err) mutable {
        end_copy(self, copying_from);
        auto it = self->state.volumes.find(name);
        if (it != self->state.volumes.end() && it->second.hdl == hdl) {
          --it->second.pending_creates;
        }
        forget_if_unused(self, name, hdl);
        rp.deliver(err);
      });
}

/// The backend a Docker Create names with `-o backend=`, or the default.
caf::expected<std::shared_ptr<backend>> docker_backend(self_ptr self, const std::string& name,
                                                       const option_map& options) {
  auto& cfg = self->state.cfg;
  auto chosen = options.find("backend");
  auto backend_name = chosen == options.end() ? cfg.default_backend : chosen->second;
  auto found = cfg.backends.find(backend_name);
  if (found == cfg.backends.end()) {
    std::string known;
    for (const auto& [known_name, known_backend] : cfg.backends) {
      known += (known.empty() ? "" : ", ") + known_name;
    }
    return make_error(ec::invalid_argument, "option backend=" + quote_input(backend_name)
                                              + " of volume " + name
                                              + " names no backend (berth has: " + known + ")");
  }
  return found->second;
}

/// A Docker Create with -o from-snapshot or clone-of, once the source's record is read:
/// the copy is made on the source's backend, at least the source's size.
void create_docker_copy(self_ptr self, const std::string& name, option_map options,
                        const volume_record& src, caf::typed_response_promise<atom::ok> rp) {
  auto& cfg = self->state.cfg;
  auto chosen = options.find("backend");
  if (chosen != options.end() && chosen->second != src.backend) {
    rp.deliver(make_error(ec::invalid_argument,
                          to_string(src.kind) + " " + src.name + " is on backend " + src.backend
                            + ", and volume " + name + " asks for backend "
                            + quote_input(chosen->second) + ": a copy lives on its source's "
                            + "backend (leave -o backend out)"));
    return;
  }
  auto found = cfg.backends.find(src.backend);
  if (found == cfg.backends.end() || !found->second->copies_content()) {
    rp.deliver(make_error(ec::unsupported,
                          to_string(src.kind) + " " + src.name + " is on backend " + src.backend
                            + ", which cannot copy a volume: snapshots and clones need a "
                            + "volume made with -o backend=block"));
    return;
  }
  if (auto capacity = found->second->validate_docker(name, options); !capacity) {
    rp.deliver(capacity.error());
    return;
  }
  create_entry(self, name, src.backend, src.name, rp, std::move(options), src.capacity_bytes);
}

caf::result<atom::ok> create(self_ptr self, const std::string& name, option_map& options) {
  if (!is_valid_volume_name(name)) {
    return bad_name(name);
  }
  auto source = docker_content_source(name, options);
  if (!source) {
    return source.error();
  }
  if (auto existing = find(self, name); existing != nullptr && existing->created) {
    // A retried Create goes straight to its volume, which compares the options it was
    // made with (its source may be gone since, and that is fine).
    auto rp = self->make_response_promise<atom::ok>();
    create_entry(self, name, std::string{}, std::string{}, rp, std::move(options), uint64_t{0});
    return rp;
  }
  if (source->empty()) {
    // `-o backend=` picks the backend, as the StorageClass parameter does for CSI.
    auto storage = docker_backend(self, name, options);
    if (!storage) {
      return storage.error();
    }
    if (auto capacity = (*storage)->validate_docker(name, options); !capacity) {
      return capacity.error();
    }
    auto rp = self->make_response_promise<atom::ok>();
    create_entry(self, name, (*storage)->name(), std::string{}, rp, std::move(options),
                 uint64_t{0});
    return rp;
  }
  const std::string key = source->kind == record_kind::snapshot ? docker_from_snapshot_key
                                                                 : docker_clone_of_key;
  auto missing = make_error(ec::not_found, "option " + key + " of volume " + name
                                             + ": no Docker " + to_string(source->kind) + " "
                                             + source->name);
  auto entry = find(self, source->name);
  if (entry == nullptr) {
    return missing;
  }
  // Made only after the checks: a made promise takes over the reply (CAF 0.17).
  auto rp = self->make_response_promise<atom::ok>();
  auto kind = source->kind;
  self->request(entry->hdl, caf::infinite, atom::get_v, std::string{owner_docker})
    .then(
      [self, name, options, kind, missing, rp](volume_record& src) mutable {
        if (src.kind != kind) {
          rp.deliver(missing);
          return;
        }
        create_docker_copy(self, name, std::move(options), src, rp);
      },
      [rp, missing](caf::error&) mutable { rp.deliver(missing); });
  return rp;
}

/// CSI CreateVolume/CreateSnapshot. With a content source, the source's record is
/// read first: it must exist and be of the named kind, and its size goes into
/// the spec (a restored volume is at least as large as its source).
caf::result<volume_record> create_csi(self_ptr self, const std::string& name, volume_spec spec) {
  if (!is_valid_volume_name(name)) {
    return bad_name(name);
  }
  auto& cfg = self->state.cfg;
  if (spec.kind == record_kind::snapshot && spec.source.empty()) {
    return make_error(ec::invalid_argument, "snapshot " + name + " names no volume to take");
  }
  // A snapshot's backend is its volume's (below); a volume's is the one asked for.
  if (spec.kind == record_kind::volume && cfg.backends.count(spec.backend) == 0) {
    return make_error(ec::invalid_argument, "unknown backend \"" + spec.backend + "\"");
  }
  auto existing = find(self, name);
  if (spec.source.empty() || (existing != nullptr && existing->created)) {
    // A retried create goes straight to its volume, which compares the source
    // recorded at creation: the source may be gone since, and that is fine.
    auto rp = self->make_response_promise<volume_record>();
    auto backend_name = spec.backend; // copied first: argument order is unspecified
    create_entry(self, name, backend_name, std::string{}, rp, std::move(spec));
    return rp;
  }
  auto kind = spec.source.kind;
  if (spec.kind == record_kind::snapshot && kind != record_kind::volume) {
    return make_error(ec::invalid_argument, "snapshot " + name + " must be taken of a volume, not "
                                              + spec.source.describe());
  }
  auto missing = make_error(ec::not_found,
                            "source " + spec.source.describe() + " of " + name + " not found");
  if (spec.source.name == name) {
    return make_error(ec::invalid_argument, "invalid content source \"" + spec.source.describe()
                                              + "\" for " + name);
  }
  auto entry = find(self, spec.source.name);
  if (entry == nullptr) {
    return missing;
  }
  // Made only after the checks: in CAF 0.17 a made promise takes over the reply,
  // so an error returned after it would never reach the caller.
  auto rp = self->make_response_promise<volume_record>();
  // Scoped to the asking namespace: another's volume is no content source ("not found").
  auto owner = spec.owner;
  self->request(entry->hdl, caf::infinite, atom::get_v, std::move(owner))
    .then(
      [self, name, spec, kind, missing, rp](volume_record& src) mutable {
        if (src.kind != kind) {
          rp.deliver(missing);
          return;
        }
        if (spec.kind == record_kind::snapshot) {
          // A snapshot lives where its volume does, whatever the class said.
          spec.backend = src.backend;
        } else if (src.backend != spec.backend) {
          rp.deliver(make_error(ec::invalid_argument,
                                "source " + spec.source.describe() + " is on backend "
                                  + src.backend + ", " + name + " asks for " + spec.backend));
          return;
        }
        spec.source_bytes = src.capacity_bytes;
        auto backend_name = spec.backend;
        auto source_name = spec.source.name;
        create_entry(self, name, backend_name, source_name, rp, std::move(spec));
      },
      [rp, missing](caf::error&) mutable { rp.deliver(missing); });
  return rp;
}

/// Removes `name` if it is a record of `owner` and `kind`.
caf::result<atom::ok> remove(self_ptr self, const std::string& name, const std::string& owner,
                             record_kind kind) {
  auto entry = find(self, name);
  if (entry == nullptr) {
    return no_such_volume(name);
  }
  if (auto copies = self->state.copying.find(name); copies != self->state.copying.end()) {
    return make_error(ec::in_use, to_string(kind) + " " + name + " is being copied ("
                                    + std::to_string(copies->second) + " snapshot or clone of "
                                    + "it in progress); remove it when that has finished");
  }
  auto hdl = entry->hdl;
  auto rp = self->make_response_promise<atom::ok>();
  self->request(hdl, caf::infinite, atom::remove_v, owner, kind).then(
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

/// Asks every created volume for its record, collecting them sorted by name;
/// with an `owner`, only that owner's records.
caf::result<std::vector<volume_record>> list(self_ptr self, const std::string& owner) {
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
  auto settle = [out, left, rp, owner]() mutable {
    if (--*left == 0) {
      std::vector<volume_record> all;
      all.reserve(out->size());
      for (auto& [name, rec] : *out) {
        if (owner.empty() || owner_of(rec) == owner) {
          all.push_back(std::move(rec));
        }
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
    [self](atom::mount, const std::string& name, std::string& id, std::string& dockerd,
           caller& from) -> caf::result<std::string> {
      return forward<std::string>(self, name, atom::mount_v, std::move(id), std::move(dockerd),
                                  std::move(from));
    },
    [self](atom::release, const std::string& name, mount_release& r) -> caf::result<uint32_t> {
      return forward<uint32_t>(self, name, atom::release_v, std::move(r));
    },
    [self](atom::unmount, const std::string& name,
           std::string& id) -> caf::result<atom::ok> {
      return forward<atom::ok>(self, name, atom::unmount_v, std::move(id));
    },
    [self](atom::remove, const std::string& name, const std::string& owner,
           record_kind kind) { return remove(self, name, owner, kind); },
    [self](atom::get, const std::string& name) -> caf::result<volume_record> {
      return forward<volume_record>(self, name, atom::get_v);
    },
    [self](atom::get, const std::string& name,
           std::string& owner) -> caf::result<volume_record> {
      return forward<volume_record>(self, name, atom::get_v, std::move(owner));
    },
    [self](atom::list) { return list(self, ""); },
    [self](atom::list, const std::string& owner) { return list(self, owner); },
    // -- CSI ---------------------------------------------------------------------
    [self](atom::create, const std::string& name, volume_spec& spec) {
      return create_csi(self, name, std::move(spec));
    },
    [self](atom::stage, const std::string& name,
           stage_request& req) -> caf::result<atom::ok> {
      return forward<atom::ok>(self, name, atom::stage_v, std::move(req));
    },
    [self](atom::unstage, const std::string& name,
           std::string& path) -> caf::result<atom::ok> {
      return forward<atom::ok>(self, name, atom::unstage_v, std::move(path));
    },
    [self](atom::publish, const std::string& name,
           publish_request& req) -> caf::result<atom::ok> {
      return forward<atom::ok>(self, name, atom::publish_v, std::move(req));
    },
    [self](atom::unpublish, const std::string& name,
           std::string& target) -> caf::result<atom::ok> {
      return forward<atom::ok>(self, name, atom::unpublish_v, std::move(target));
    },
    [self](atom::modify, const std::string& name, modify_request& req)
      -> caf::result<volume_record> {
      return forward<volume_record>(self, name, atom::modify_v, std::move(req));
    },
    [self](atom::grow, const std::string& name, std::string& path) -> caf::result<uint64_t> {
      return forward<uint64_t>(self, name, atom::grow_v, std::move(path));
    },
    [self](atom::stats, const std::string& name,
           std::string& path) -> caf::result<volume_stats> {
      return forward<volume_stats>(self, name, atom::stats_v, std::move(path));
    },
    [self](atom::drain) { return drain(self); },
    [](atom::ping) { return atom::ok_v; },
  };
}

} // namespace berth
