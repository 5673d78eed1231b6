#include "backends/modify_cooldown.hpp"

#include "core/errors.hpp"
#include "core/text.hpp"

namespace berth {

namespace {

using std::chrono::system_clock;

/// `t` as RFC 3339, rounded up to the second: the earliest time a message may promise.
std::string rfc3339_up(system_clock::time_point t) {
  return rfc3339(std::chrono::ceil<std::chrono::seconds>(t));
}

} // namespace

modify_cooldown::modify_cooldown(cooldown_config config) : config_(std::move(config)) {
}

std::chrono::milliseconds modify_cooldown::interval() const {
  return config_.interval;
}

system_clock::time_point modify_cooldown::now() const {
  return config_.clock ? config_.clock() : system_clock::now();
}

caf::error modify_cooldown::check(const std::string& volume, const std::string& what) const {
  if (config_.interval.count() <= 0) {
    return {};
  }
  system_clock::time_point last;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = last_.find(volume);
    if (it == last_.end()) {
      return {};
    }
    last = it->second.at;
  }
  const auto ready = last + config_.interval;
  const auto current = now();
  if (current >= ready) {
    return {};
  }
  auto wait = std::chrono::ceil<std::chrono::seconds>(ready - current).count();
  return make_error(ec::resource_exhausted,
                    what + " was modified at " + rfc3339(last)
                      + " and may be modified again at " + rfc3339_up(ready) + " (in "
                      + std::to_string(wait) + " s): at most one modification per "
                      + std::to_string(config_.interval.count())
                      + " ms (--modify-cooldown-ms); retry then");
}

void modify_cooldown::record(const std::string& volume, const option_map& parameters) {
  if (config_.interval.count() <= 0) {
    return;
  }
  const auto at = now();
  std::lock_guard<std::mutex> guard(mutex_);
  auto& e = last_[volume];
  e.at = at;
  for (const auto& [key, value] : parameters) {
    e.parameters[key] = value;
  }
}

option_map modify_cooldown::applied(const std::string& volume) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = last_.find(volume);
  return it == last_.end() ? option_map{} : it->second.parameters;
}

void modify_cooldown::forget(const std::string& volume) {
  std::lock_guard<std::mutex> guard(mutex_);
  last_.erase(volume);
}

} // namespace berth
