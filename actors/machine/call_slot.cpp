#include "actors/machine/call_slot.hpp"

#include <cassert>

namespace berth {

caf::error call_slot::still_hung(const std::string& name, const std::string& what,
                                 clock::time_point now) const {
  assert(!hung_.empty());
  const auto& h = hung_.begin()->second;
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - h.since);
  return make_error(ec::aborted,
                    "volume " + name + ": its " + std::string{words_of(h.kind)} + " started at "
                      + h.started + " has not returned (hung for " + std::to_string(secs.count())
                      + " s); " + what + " not started, retry later");
}

std::optional<call_slot::clock::time_point> call_slot::begin(uint64_t token, submitted c,
                                                             clock::time_point now) {
  assert(idle() && token != 0);
  current_ = current_call{token, std::move(c), now};
  if (timer_armed_) {
    return std::nullopt;
  }
  timer_armed_ = true;
  return now + timeout_;
}

std::variant<call_slot::finished, call_slot::returned_late, call_slot::stray> call_slot::done(
  uint64_t token) {
  if (current_ && token == current_->token) {
    auto c = std::move(*current_);
    current_.reset();
    return finished{c.call.kind, c.began, std::move(c.call.then)};
  }
  auto it = hung_.find(token);
  if (it == hung_.end()) {
    return stray{};
  }
  auto h = std::move(it->second);
  hung_.erase(it);
  return returned_late{std::move(h), hung_.empty()};
}

std::variant<call_slot::not_due, call_slot::expired> call_slot::timer_fired(clock::time_point now) {
  timer_armed_ = false;
  if (idle()) {
    return not_due{}; // the call it was armed for returned, and none runs now
  }
  if (auto deadline = current_->began + timeout_; now < deadline) {
    timer_armed_ = true; // it was armed for an earlier call
    return not_due{deadline};
  }
  auto c = std::move(*current_);
  current_.reset();
  return expired{c.token, std::move(c.call), c.began};
}

bool call_slot::hang(expired e, clock::time_point now) {
  bool was_certain = hung_.empty();
  hung_.emplace(
    e.token,
    hung_call{e.call.kind, std::move(e.call.started), now, e.began, std::move(e.call.settle)});
  return was_certain;
}

} // namespace berth
