#include "core/telemetry/volume_health.hpp"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>

namespace berth {

const char* abnormal_reason_name(abnormal_reason r) noexcept {
  switch (r) {
    case abnormal_reason::image_missing: return "image_missing";
    case abnormal_reason::image_short: return "image_short";
    case abnormal_reason::image_replaced: return "image_replaced";
    case abnormal_reason::device_detached: return "device_detached";
    case abnormal_reason::mount_gone: return "mount_gone";
    case abnormal_reason::mount_foreign: return "mount_foreign";
    case abnormal_reason::filesystem_shut_down: return "filesystem_shut_down";
    case abnormal_reason::filesystem_errors: return "filesystem_errors";
    case abnormal_reason::filesystem_read_only: return "filesystem_read_only";
    case abnormal_reason::modify_failing: return "modify_failing";
    case abnormal_reason::call_hung: return "call_hung";
  }
  return "unknown";
}

std::string describe_conditions(const volume_conditions& c) {
  std::string out;
  for (const auto& one : c) {
    if (!out.empty()) {
      out += "; ";
    }
    out += one.message;
  }
  return out;
}

namespace {

bool has_reason(const volume_conditions& c, abnormal_reason r) {
  return std::any_of(c.begin(), c.end(), [r](const auto& one) { return one.reason == r; });
}

/// Logs what began in `now` and ended since `before`: by reason, so a message whose
/// figures change (a count of errors) is not logged again.
void log_changes(const std::string& volume, const volume_conditions& before,
                 const volume_conditions& now) {
  for (const auto& one : now) {
    if (!has_reason(before, one.reason)) {
      spdlog::warn("volume {} is abnormal ({}): {}", volume, abnormal_reason_name(one.reason),
                   one.message);
    }
  }
  for (const auto& one : before) {
    if (!has_reason(now, one.reason)) {
      spdlog::info("volume {}: {} has ended", volume, abnormal_reason_name(one.reason));
    }
  }
}

} // namespace

void volume_health::replace_observed(std::map<std::string, volume_conditions> seen) {
  for (auto& [volume, c] : seen) {
    std::sort(c.begin(), c.end(), [](const auto& a, const auto& b) { return a.reason < b.reason; });
  }
  std::lock_guard<std::mutex> guard{mtx_};
  static const volume_conditions none;
  for (const auto& [volume, before] : observed_) {
    if (seen.count(volume) == 0) {
      log_changes(volume, before, none);
    }
  }
  for (const auto& [volume, now] : seen) {
    auto it = observed_.find(volume);
    log_changes(volume, it == observed_.end() ? none : it->second, now);
  }
  observed_ = std::move(seen);
  for (auto it = observed_.begin(); it != observed_.end();) {
    it = it->second.empty() ? observed_.erase(it) : std::next(it);
  }
}

void volume_health::set_hung(const std::string& volume, std::string message) {
  std::lock_guard<std::mutex> guard{mtx_};
  hung_[volume] = volume_condition{abnormal_reason::call_hung, std::move(message)};
}

void volume_health::clear_hung(const std::string& volume) {
  std::lock_guard<std::mutex> guard{mtx_};
  hung_.erase(volume);
}

void volume_health::modify_failed(const std::string& volume, const std::string& error) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto& f = modify_failures_[volume];
  f.last = error;
  if (++f.count == modify_failures_abnormal) {
    spdlog::warn("volume {} is abnormal (modify_failing): its last {} modifications failed, the "
                 "last with: {}",
                 volume, f.count, error);
  }
}

void volume_health::modify_applied(const std::string& volume) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto it = modify_failures_.find(volume);
  if (it == modify_failures_.end()) {
    return;
  }
  if (it->second.count >= modify_failures_abnormal) {
    spdlog::info("volume {}: modify_failing has ended", volume);
  }
  modify_failures_.erase(it);
}

void volume_health::forget(const std::string& volume) {
  std::lock_guard<std::mutex> guard{mtx_};
  hung_.erase(volume);
  modify_failures_.erase(volume);
}

volume_conditions volume_health::of(const std::string& volume) const {
  std::lock_guard<std::mutex> guard{mtx_};
  volume_conditions out;
  if (auto it = observed_.find(volume); it != observed_.end()) {
    out = it->second;
  }
  // The actors' reasons are the last two, in this order.
  if (auto it = modify_failures_.find(volume);
      it != modify_failures_.end() && it->second.count >= modify_failures_abnormal) {
    out.push_back({abnormal_reason::modify_failing,
                   "its last " + std::to_string(it->second.count)
                     + " modifications (expand, modify) failed, the last with: " + it->second.last
                     + "; berthd's log has each one"});
  }
  if (auto it = hung_.find(volume); it != hung_.end()) {
    out.push_back(it->second);
  }
  return out;
}

std::array<int64_t, abnormal_reason_count> volume_health::counts() const {
  std::array<int64_t, abnormal_reason_count> out{};
  std::lock_guard<std::mutex> guard{mtx_};
  for (const auto& [volume, c] : observed_) {
    for (const auto& one : c) {
      ++out[static_cast<size_t>(one.reason)];
    }
  }
  for (const auto& [volume, f] : modify_failures_) {
    if (f.count >= modify_failures_abnormal) {
      ++out[static_cast<size_t>(abnormal_reason::modify_failing)];
    }
  }
  out[static_cast<size_t>(abnormal_reason::call_hung)] += static_cast<int64_t>(hung_.size());
  return out;
}

} // namespace berth
