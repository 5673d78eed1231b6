#include "core/retry.hpp"

#include <spdlog/spdlog.h>

#include "core/errors.hpp"

namespace berth::drain {

std::string failure_kind(const caf::error& err) {
  if (is(err, ec::unavailable) || is(err, ec::timeout)) {
    return "unreachable";
  }
  if (is(err, ec::failed_precondition)) {
    return "refused the credentials";
  }
  return "failed";
}

void failure_log::failed(const std::string& what, const caf::error& err) {
  ++failures_;
  auto kind = failure_kind(err);
  auto msg = describe(err);
  if (!seen_.insert(what + "/" + kind).second) {
    spdlog::debug("prestop: {} failed again: {}", what, msg);
    return;
  }
  if (kind == "unreachable") {
    spdlog::warn("prestop: the Kubernetes API is unreachable while {}: {}; retrying with "
                 "backoff until the deadline",
                 what, msg);
  } else if (kind == "refused the credentials") {
    spdlog::warn("prestop: the Kubernetes API refused the credentials while {}: {}; check the "
                 "service account token (or --kubeconfig) and the RBAC rules; retrying with "
                 "backoff until the deadline",
                 what, msg);
  } else {
    spdlog::warn("prestop: {} failed: {}; retrying with backoff until the deadline", what, msg);
  }
}

void failure_log::succeeded(const std::string& what) {
  if (failures_ > 0) {
    spdlog::info("prestop: the Kubernetes API answers again ({} succeeded after {} failed calls)",
                 what, failures_);
    failures_ = 0;
  }
}

} // namespace berth::drain
