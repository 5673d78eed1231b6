#pragma once

// The backend calls a volume makes, as one enum: the label each is timed under
// (berth_backend_call_duration_seconds' `call`) and the words logs and errors name it
// by follow from it, so a call without a label does not compile.

#include <array>
#include <cstdint>
#include <string_view>

namespace berth {

enum class backend_call : uint8_t {
  create,
  snapshot, ///< the create of a snapshot
  remove,
  mount,
  unmount,
  lazy_unmount, ///< MNT_DETACH, standing in for a hung unmount
  stage,
  unstage,
  publish,
  unpublish,
  modify,
  stats,
  node_expand, ///< NodeExpandVolume's filesystem grow
  reconcile,
  export_copy,  ///< an export's copy, made or removed
  path_changes, ///< publishes and unpublishes of several paths in one call
  import_delta, ///< a delta applied to a volume's image
};

/// Every backend_call, in the order above.
inline constexpr std::array<backend_call, 17> all_backend_calls{
  backend_call::create,       backend_call::snapshot,    backend_call::remove,
  backend_call::mount,        backend_call::unmount,     backend_call::lazy_unmount,
  backend_call::stage,        backend_call::unstage,     backend_call::publish,
  backend_call::unpublish,    backend_call::modify,      backend_call::stats,
  backend_call::node_expand,  backend_call::reconcile,   backend_call::export_copy,
  backend_call::path_changes, backend_call::import_delta};

/// Its metric label: "lazy_unmount", "node_expand".
std::string_view label_of(backend_call call) noexcept;

/// How logs and errors name it: "lazy unmount", "grow".
std::string_view words_of(backend_call call) noexcept;

} // namespace berth
