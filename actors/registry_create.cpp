// The registry's creations: a Docker Create (with -o backend=, or a copy of one of
// Docker's volumes or snapshots), berthctl import's, and CSI's CreateVolume and
// CreateSnapshot. A create with a content source reads the source's record first, and
// counts a copy of it until it is answered, so the source is not removed under the copy.

#include <caf/typed_event_based_actor.hpp>

#include "actors/detail/registry_ops.hpp"
#include "core/docker_source.hpp"
#include "core/errors.hpp"
#include "core/names.hpp"
#include "core/text.hpp"

namespace berth::registry_detail {

void end_copy(self_ptr self, const std::string& source) {
  auto it = self->state.copying.find(source);
  if (it != self->state.copying.end() && --it->second == 0) {
    self->state.copying.erase(it);
  }
}

namespace {

/// Spawns (or reuses) the actor for `name` and asks it to create itself with `xs`,
/// delivering its answer to `rp`. Counts the pending creation so a concurrent
/// Remove or failed Create does not drop the name under it, and a copy of
/// `copying_from` ("": none) so its source is not removed under it.
template <class Result, class... Ts>
void create_entry(self_ptr self, const std::string& name, const std::string& backend_name,
                  const std::string& copying_from, reply_to<Result> rp, Ts... xs) {
  if (!copying_from.empty()) {
    ++self->state.copying[copying_from];
  }
  auto& entry = self->state.volumes[name];
  if (entry.dormant) {
    wake(self, name, entry); // a create of a loaded volume: its actor answers it
  }
  if (!entry.hdl) {
    volume_record rec;
    rec.name = name;
    rec.backend = backend_name;
    entry.hdl = spawn_volume(self, std::make_shared<const volume_record>(std::move(rec)), false);
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
          self->state.cfg.handles->put(name, hdl);
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
                        const volume_record& src, reply_to<atom::ok> rp) {
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
  if (auto err = found->second->check_copy_source(src)) {
    rp.deliver(err);
    return;
  }
  if (auto capacity = found->second->validate_docker(name, options); !capacity) {
    rp.deliver(capacity.error());
    return;
  }
  create_entry(self, name, src.backend, src.name, rp, std::move(options), src.capacity_bytes);
}

} // namespace

void create_docker(self_ptr self, const std::string& name, option_map options,
                   reply_to<atom::ok> rp) {
  if (!is_valid_volume_name(name)) {
    rp.deliver(bad_name(name));
    return;
  }
  auto source = docker_content_source(name, options);
  if (!source) {
    rp.deliver(source.error());
    return;
  }
  if (auto existing = find(self, name); existing != nullptr && existing->created) {
    // A retried Create goes straight to its volume, which compares the options it was
    // made with (its source may be gone since, and that is fine).
    create_entry(self, name, std::string{}, std::string{}, std::move(rp), std::move(options),
                 uint64_t{0});
    return;
  }
  if (source->empty()) {
    // `-o backend=` picks the backend, as the StorageClass parameter does for CSI.
    auto storage = docker_backend(self, name, options);
    if (!storage) {
      rp.deliver(storage.error());
      return;
    }
    if (auto capacity = (*storage)->validate_docker(name, options); !capacity) {
      rp.deliver(capacity.error());
      return;
    }
    create_entry(self, name, (*storage)->name(), std::string{}, std::move(rp), std::move(options),
                 uint64_t{0});
    return;
  }
  const std::string key = source->kind == record_kind::snapshot ? docker_from_snapshot_key
                                                                 : docker_clone_of_key;
  auto missing = make_error(ec::not_found, "option " + key + " of volume " + name
                                             + ": no Docker " + to_string(source->kind) + " "
                                             + source->name);
  auto entry = find(self, source->name);
  if (entry == nullptr) {
    rp.deliver(missing);
    return;
  }
  auto kind = source->kind;
  self->request(entry->hdl, caf::infinite, atom::get_v, record_owner::docker)
    .then(
      [self, name, options, kind, missing, rp](volume_record& src) mutable {
        if (src.kind != kind) {
          rp.deliver(missing);
          return;
        }
        create_docker_copy(self, name, std::move(options), src, rp);
      },
      [rp, missing](caf::error&) mutable { rp.deliver(missing); });
}

namespace {

/// What an import's options may not name: it makes a plain directory or a block volume of
/// its own content.
caf::error check_import_options(const std::string& name, const option_map& options) {
  for (const char* key : {"type", "device", "o", docker_from_snapshot_key, docker_clone_of_key}) {
    if (options.count(key) > 0) {
      return make_error(ec::invalid_argument,
                        std::string{"option "} + key + " of volume " + name
                          + " cannot be given to an import: it makes a plain directory volume, "
                            "or with -o backend=block a block one, holding the tar's files");
    }
  }
  return {};
}

} // namespace

caf::expected<std::string> check_import(self_ptr self, const std::string& name,
                                        const option_map& options) {
  if (!is_valid_volume_name(name)) {
    return bad_name(name);
  }
  if (auto existing = find(self, name); existing != nullptr) {
    return make_error(ec::already_exists, "volume " + name + " exists already: an import "
                                            "makes a new volume (choose another name)");
  }
  if (auto err = check_import_options(name, options)) {
    return err;
  }
  auto storage = docker_backend(self, name, options);
  if (!storage) {
    return storage.error();
  }
  if (auto capacity = (*storage)->validate_docker(name, options); !capacity) {
    return capacity.error();
  }
  return (*storage)->name();
}

caf::result<atom::ok> create_import(self_ptr self, const std::string& name, option_map& options,
                                    const std::string& tree) {
  auto backend_name = check_import(self, name, options);
  if (!backend_name) {
    return backend_name.error();
  }
  auto rp = self->make_response_promise<atom::ok>();
  create_entry(self, name, *backend_name, std::string{}, reply_to<atom::ok>{rp}, std::move(options),
               uint64_t{0}, tree);
  return rp;
}

/// CSI CreateVolume/CreateSnapshot. With a content source, the source's record is
/// read first: it must exist and be of the named kind, and its size goes into
/// the spec (a restored volume is at least as large as its source).
void create_csi(self_ptr self, const std::string& name, volume_spec spec,
                reply_to<volume_record> rp) {
  if (!is_valid_volume_name(name)) {
    rp.deliver(bad_name(name));
    return;
  }
  auto& cfg = self->state.cfg;
  if (spec.kind == record_kind::snapshot && spec.source.empty()) {
    rp.deliver(make_error(ec::invalid_argument, "snapshot " + name + " names no volume to take"));
    return;
  }
  // A snapshot's backend is its volume's (below); a volume's is the one asked for.
  if (spec.kind == record_kind::volume && cfg.backends.count(spec.backend) == 0) {
    rp.deliver(make_error(ec::invalid_argument, "unknown backend \"" + spec.backend + "\""));
    return;
  }
  auto existing = find(self, name);
  if (spec.source.empty() || (existing != nullptr && existing->created)) {
    // A retried create goes straight to its volume, which compares the source
    // recorded at creation: the source may be gone since, and that is fine.
    auto backend_name = spec.backend; // copied first: argument order is unspecified
    create_entry(self, name, backend_name, std::string{}, std::move(rp), std::move(spec));
    return;
  }
  auto kind = spec.source.kind;
  if (spec.kind == record_kind::snapshot && kind != record_kind::volume) {
    rp.deliver(
      make_error(ec::invalid_argument,
                 "snapshot " + name + " must be taken of a volume, not " + spec.source.describe()));
    return;
  }
  auto missing = make_error(ec::not_found,
                            "source " + spec.source.describe() + " of " + name + " not found");
  if (spec.source.name == name) {
    rp.deliver(make_error(ec::invalid_argument,
                          "invalid content source \"" + spec.source.describe() + "\" for " + name));
    return;
  }
  auto entry = find(self, spec.source.name);
  if (entry == nullptr) {
    rp.deliver(missing);
    return;
  }
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
        auto storage = self->state.cfg.backends.find(spec.backend);
        if (storage != self->state.cfg.backends.end()) {
          if (auto err = storage->second->check_copy_source(src)) {
            rp.deliver(err);
            return;
          }
        }
        spec.source_bytes = src.capacity_bytes;
        auto backend_name = spec.backend;
        auto source_name = spec.source.name;
        create_entry(self, name, backend_name, source_name, rp, std::move(spec));
      },
      [rp, missing](caf::error&) mutable { rp.deliver(missing); });
}

} // namespace berth::registry_detail
