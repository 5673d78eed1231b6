#include "core/caller.hpp"

#include <mutex>
#include <utility>
#include <vector>

namespace berth {

struct caller::state {
  clock::time_point deadline;
  std::shared_ptr<const process_stat> peer; ///< set once, before the caller is shared
  mutable std::mutex mtx; ///< guards everything below
  std::string why;        ///< "" while the client waits
  bool answered = false;
  std::vector<std::function<void(const std::string&)>> on_gone;
};

caller caller::tracked(clock::time_point deadline, std::shared_ptr<const process_stat> peer) {
  caller out;
  out.state_ = std::make_shared<state>();
  out.state_->deadline = deadline;
  out.state_->peer = std::move(peer);
  return out;
}

const process_stat* caller::peer() const {
  return state_ ? state_->peer.get() : nullptr;
}

void caller::leave(const std::string& why) const {
  if (!state_) {
    return;
  }
  std::vector<std::function<void(const std::string&)>> run;
  std::string reason;
  {
    std::lock_guard<std::mutex> lock(state_->mtx);
    if (state_->answered || !state_->why.empty()) {
      return;
    }
    state_->why = why.empty() ? "gone" : why;
    reason = state_->why;
    run.swap(state_->on_gone);
  }
  for (auto& fn : run) { // outside the lock: a callback may ask the caller again
    fn(reason);
  }
}

void caller::answered() const {
  if (!state_) {
    return;
  }
  std::lock_guard<std::mutex> lock(state_->mtx);
  if (state_->why.empty()) {
    state_->answered = true;
    state_->on_gone.clear();
  }
}

void caller::on_gone(std::function<void(const std::string&)> fn) const {
  if (!state_ || !fn) {
    return;
  }
  auto why = gone();
  if (why.empty()) {
    std::lock_guard<std::mutex> lock(state_->mtx);
    if (state_->answered) {
      return;
    }
    if (state_->why.empty()) {
      state_->on_gone.push_back(std::move(fn));
      return;
    }
    why = state_->why;
  }
  fn(why);
}

std::string caller::gone() const {
  if (!state_) {
    return {};
  }
  {
    std::lock_guard<std::mutex> lock(state_->mtx);
    if (state_->answered) {
      return {};
    }
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
