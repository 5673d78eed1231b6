#include "backends/stall_backend.hpp"

#include <algorithm>

namespace berth {

class stall_backend::call_guard {
public:
  call_guard(stall_backend& owner, const volume_record& rec) : owner_(owner), name_(rec.name) {
    std::unique_lock<std::mutex> lock(owner_.mtx_);
    auto now = ++owner_.in_flight_[name_];
    auto& top = owner_.max_in_flight_[name_];
    top = std::max(top, now);
    if (owner_.volumes_.count(name_) > 0 && owner_.stall_.count() > 0) {
      ++owner_.stalled_[name_];
      owner_.released_cv_.wait_for(lock, owner_.stall_, [this] { return owner_.released_; });
    }
  }
  ~call_guard() {
    std::lock_guard<std::mutex> lock(owner_.mtx_);
    --owner_.in_flight_[name_];
  }
  call_guard(const call_guard&) = delete;
  call_guard& operator=(const call_guard&) = delete;

private:
  stall_backend& owner_;
  std::string name_;
};

stall_backend::stall_backend(std::unique_ptr<backend> inner, std::set<std::string> volumes,
                             std::chrono::milliseconds stall)
  : inner_(std::move(inner)), volumes_(std::move(volumes)), stall_(stall) {
}

int stall_backend::max_in_flight(const std::string& volume) const {
  std::lock_guard<std::mutex> lock(mtx_);
  auto it = max_in_flight_.find(volume);
  return it == max_in_flight_.end() ? 0 : it->second;
}

int stall_backend::stalled(const std::string& volume) const {
  std::lock_guard<std::mutex> lock(mtx_);
  auto it = stalled_.find(volume);
  return it == stalled_.end() ? 0 : it->second;
}

void stall_backend::release() {
  {
    std::lock_guard<std::mutex> lock(mtx_);
    released_ = true;
  }
  released_cv_.notify_all();
}

std::string stall_backend::name() const {
  return inner_->name();
}

caf::error stall_backend::validate(const std::string& volume, const option_map& options) const {
  return inner_->validate(volume, options);
}

caf::error stall_backend::create(const volume_record& rec) {
  return inner_->create(rec);
}

caf::expected<std::string> stall_backend::mount(const volume_record& rec) {
  call_guard guard(*this, rec);
  return inner_->mount(rec);
}

caf::error stall_backend::unmount(const volume_record& rec, bool lazy) {
  call_guard guard(*this, rec);
  return inner_->unmount(rec, lazy);
}

caf::error stall_backend::remove(const volume_record& rec) {
  return inner_->remove(rec);
}

std::string stall_backend::mountpoint(const volume_record& rec) const {
  return inner_->mountpoint(rec);
}

} // namespace berth
