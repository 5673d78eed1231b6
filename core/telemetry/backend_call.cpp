#include "core/telemetry/backend_call.hpp"

namespace berth {

std::string_view label_of(backend_call call) noexcept {
  switch (call) {
    case backend_call::create: return "create";
    case backend_call::snapshot: return "snapshot";
    case backend_call::remove: return "remove";
    case backend_call::mount: return "mount";
    case backend_call::unmount: return "unmount";
    case backend_call::lazy_unmount: return "lazy_unmount";
    case backend_call::stage: return "stage";
    case backend_call::unstage: return "unstage";
    case backend_call::publish: return "publish";
    case backend_call::unpublish: return "unpublish";
    case backend_call::modify: return "modify";
    case backend_call::stats: return "stats";
    case backend_call::node_expand: return "node_expand";
    case backend_call::reconcile: return "reconcile";
    case backend_call::export_copy: return "export";
    case backend_call::path_changes: return "path_changes";
    case backend_call::import_delta: return "import_delta";
  }
  return "other"; // not reached: -Wswitch names a call left out above
}

std::string_view words_of(backend_call call) noexcept {
  switch (call) {
    case backend_call::lazy_unmount: return "lazy unmount";
    case backend_call::node_expand: return "grow";
    case backend_call::path_changes: return "publish and unpublish";
    case backend_call::import_delta: return "import of a delta";
    default: return label_of(call);
  }
}

} // namespace berth
