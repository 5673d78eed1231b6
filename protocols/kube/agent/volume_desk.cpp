#include "protocols/kube/agent/volume_desk.hpp"

#include "actors/blocking_ask.hpp"

#include "core/errors.hpp"

namespace berth::kube::agent {

namespace {

/// The registry answers every request once its transition ends, and each transition is
/// bounded by the backend timeout; this only keeps a bug from holding a thread for ever.
constexpr std::chrono::minutes longest_answer{15};

template <class T, class... Ts>
caf::expected<T> ask(caf::actor_system& sys, const registry_actor& registry, Ts&&... xs) {
  return blocking_ask<T>(sys, registry, longest_answer, "the registry", std::forward<Ts>(xs)...);
}

} // namespace

volume_desk::volume_desk(caf::actor_system& sys, registry_actor registry)
  : sys_(sys), registry_(std::move(registry)) {
}

caf::expected<std::optional<volume_record>> volume_desk::get(const std::string& name) {
  return get_kind(name, record_kind::volume);
}

caf::expected<std::optional<volume_record>> volume_desk::get_snapshot(const std::string& name) {
  return get_kind(name, record_kind::snapshot);
}

caf::expected<std::optional<volume_record>> volume_desk::get_kind(const std::string& name,
                                                                  record_kind kind) {
  auto rec = ask<volume_record>(sys_, registry_, atom::get_v, name, record_owner::csi);
  if (!rec) {
    if (is(rec.error(), ec::not_found)) {
      return std::optional<volume_record>{};
    }
    return rec.error();
  }
  if (rec->kind != kind) {
    return std::optional<volume_record>{};
  }
  return std::optional<volume_record>{std::move(*rec)};
}

caf::expected<volume_record> volume_desk::create(const std::string& name, volume_spec spec) {
  return ask<volume_record>(sys_, registry_, atom::create_v, name, std::move(spec));
}

caf::expected<volume_record> volume_desk::modify(const std::string& name, modify_request change) {
  return ask<volume_record>(sys_, registry_, atom::modify_v, name, std::move(change));
}

caf::error volume_desk::remove(const std::string& name) {
  return remove_kind(name, record_kind::volume);
}

caf::error volume_desk::remove_snapshot(const std::string& name) {
  return remove_kind(name, record_kind::snapshot);
}

caf::error volume_desk::remove_kind(const std::string& name, record_kind kind) {
  auto done = ask<atom::ok>(sys_, registry_, atom::remove_v, name, record_owner::csi, kind);
  if (!done && !is(done.error(), ec::not_found)) {
    return done.error();
  }
  return caf::none;
}

caf::expected<std::vector<volume_record>> volume_desk::volumes() {
  return records_of(record_kind::volume);
}

caf::expected<std::vector<volume_record>> volume_desk::snapshots() {
  return records_of(record_kind::snapshot);
}

caf::expected<std::vector<volume_record>> volume_desk::records_of(record_kind kind) {
  auto all = ask<shared_records>(sys_, registry_, atom::list_v, record_owner::csi);
  if (!all) {
    return all.error();
  }
  std::vector<volume_record> out;
  for (const auto& rec : *all) {
    if (rec->kind == kind) {
      out.push_back(*rec);
    }
  }
  return out;
}

} // namespace berth::kube::agent
