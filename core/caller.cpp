#include "core/caller.hpp"

#include <mutex>

namespace berth {

struct caller::state {
  clock::time_point deadline;
  mutable std::mutex mtx;
  std::string why; ///< guarded by mtx; "" while the client waits
};

caller caller::tracked(clock::time_point deadline) {
  caller out;
  out.state_ = std::make_shared<state>();
  out.state_->deadline = deadline;
  return out;
}

void caller::leave(const std::string& why) const {
  if (!state_) {
    return;
  }
  std::lock_guard<std::mutex> lock(state_->mtx);
  if (state_->why.empty()) {
    state_->why = why.empty() ? "gone" : why;
  }
}

std::string caller::gone() const {
  if (!state_) {
    return {};
  }
  {
    std::lock_guard<std::mutex> lock(state_->mtx);
    if (!state_->why.empty()) {
      return state_->why;
    }
  }
  if (clock::now() >= state_->deadline) {
    return "its deadline passed";
  }
  return {};
}

} // namespace berth
