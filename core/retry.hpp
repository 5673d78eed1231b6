#pragma once

// Exponential backoff and once-per-kind failure logging for the hook's calls to the
// Kubernetes API: a failing API is retried, never in a tight loop, and its log says
// what is wrong once instead of on every retry.

#include <algorithm>
#include <chrono>
#include <set>
#include <string>

#include <caf/error.hpp>

namespace berth::drain {

/// 250 ms, 500 ms, ... up to `cap`; reset() after a success.
class backoff {
public:
  explicit backoff(std::chrono::milliseconds first = std::chrono::milliseconds{250},
                   std::chrono::milliseconds cap = std::chrono::seconds{5})
    : first_(first), cap_(cap), next_(first) {
  }

  /// The delay before the next retry; doubles the one after it.
  std::chrono::milliseconds next() {
    auto d = next_;
    next_ = std::min(cap_, next_ * 2);
    return d;
  }

  void reset() {
    next_ = first_;
  }

private:
  std::chrono::milliseconds first_;
  std::chrono::milliseconds cap_;
  std::chrono::milliseconds next_;
};

/// Logs a failure of the Kubernetes API at warn the first time its kind (unreachable,
/// credentials refused, other) is seen for a call, at debug after that; logs once
/// when calls succeed again.
class failure_log {
public:
  /// @param what the call, e.g. "listing VolumeAttachments".
  void failed(const std::string& what, const caf::error& err);

  /// After a success: "the Kubernetes API answers again" if failures came before.
  void succeeded(const std::string& what);

private:
  std::set<std::string> seen_;
  size_t failures_ = 0;
};

/// "unreachable", "refused the credentials" or "failed", from the error's code.
std::string failure_kind(const caf::error& err);

} // namespace berth::drain
