#include "core/record_directory.hpp"

#include <mutex>
#include <utility>

namespace berth {

void record_directory::put(entry rec) {
  entry replaced; // freed after the lock: a record is maps and strings
  std::unique_lock lock{mtx_};
  ++generation_;
  auto it = records_.find(rec->name);
  if (it != records_.end()) {
    replaced = std::exchange(it->second, std::move(rec));
  } else {
    auto name = rec->name;
    records_.emplace(std::move(name), std::move(rec));
  }
}

void record_directory::erase(const std::string& name) {
  entry erased;
  std::unique_lock lock{mtx_};
  if (auto it = records_.find(name); it != records_.end()) {
    ++generation_;
    erased = std::move(it->second);
    records_.erase(it);
  }
}

record_directory::entry record_directory::find(const std::string& name) const {
  std::shared_lock lock{mtx_};
  auto it = records_.find(name);
  return it != records_.end() ? it->second : entry{};
}

shared_records record_directory::all() const {
  return read().records;
}

record_directory::snapshot record_directory::read() const {
  snapshot out;
  std::shared_lock lock{mtx_};
  out.generation = generation_.load();
  out.records.reserve(records_.size());
  for (const auto& [name, rec] : records_) {
    out.records.push_back(rec);
  }
  return out;
}

} // namespace berth
