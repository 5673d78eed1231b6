#include "core/directory_memo.hpp"

#include <utility>

namespace berth {

std::shared_ptr<const std::string> directory_memo::get(const record_directory& dir,
                                                       const make_fn& make) {
  auto now = dir.generation();
  {
    std::lock_guard lock{mtx_};
    if (answer_ && generation_ == now) {
      return answer_;
    }
  }
  // Made outside the lock: two callers that find it stale may both make it, but no caller
  // waits behind another's encoding, and each answers records at least as new as its call.
  auto read = dir.read();
  auto made = std::make_shared<const std::string>(make(read.records));
  std::shared_ptr<const std::string> replaced; // freed after the lock
  std::lock_guard lock{mtx_};
  if (!answer_ || read.generation > generation_) {
    generation_ = read.generation;
    replaced = std::exchange(answer_, made);
  }
  return made;
}

} // namespace berth
