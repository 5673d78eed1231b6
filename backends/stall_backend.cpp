#include "backends/stall_backend.hpp"

#include <thread>

namespace berth {

stall_backend::stall_backend(std::unique_ptr<backend> inner, std::string volume,
                             std::chrono::milliseconds stall)
  : inner_(std::move(inner)), volume_(std::move(volume)), stall_(stall) {
}

void stall_backend::maybe_stall(const volume_record& rec) const {
  if (rec.name == volume_ && stall_.count() > 0) {
    std::this_thread::sleep_for(stall_);
  }
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
  maybe_stall(rec);
  return inner_->mount(rec);
}

caf::error stall_backend::unmount(const volume_record& rec, bool lazy) {
  maybe_stall(rec);
  return inner_->unmount(rec, lazy);
}

caf::error stall_backend::remove(const volume_record& rec) {
  return inner_->remove(rec);
}

std::string stall_backend::mountpoint(const volume_record& rec) const {
  return inner_->mountpoint(rec);
}

} // namespace berth
