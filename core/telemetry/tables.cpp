#include "core/telemetry/tables.hpp"

#include <algorithm>
#include <set>

namespace berth {

namespace {

template <class Key>
std::vector<Key> sorted_unique(std::vector<Key> keys) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

/// Position of `key` in the sorted `keys`, or `keys.size()` when absent.
template <class Key, class Probe>
size_t find(const std::vector<Key>& keys, const Probe& key) {
  auto it = std::lower_bound(keys.begin(), keys.end(), key);
  return it != keys.end() && !(key < *it) ? static_cast<size_t>(it - keys.begin()) : keys.size();
}

/// Compares a stored pair with a probe of two string_views without building strings.
struct pair_probe {
  std::string_view a;
  std::string_view b;
};

bool operator<(const label_pair& key, const pair_probe& p) {
  return std::string_view{key.first} < p.a
         || (std::string_view{key.first} == p.a && std::string_view{key.second} < p.b);
}

bool operator<(const pair_probe& p, const label_pair& key) {
  return p.a < std::string_view{key.first}
         || (p.a == std::string_view{key.first} && p.b < std::string_view{key.second});
}

} // namespace

// -- counter_table --------------------------------------------------------------

counter_table::counter_table(std::vector<std::string> keys) {
  keys.emplace_back(other_label);
  keys_ = sorted_unique(std::move(keys));
  counts_ = std::make_unique<metrics::atomic_counter[]>(keys_.size());
  other_ = find(keys_, std::string_view{other_label});
}

void counter_table::add(std::string_view key, uint64_t n) noexcept {
  auto i = find(keys_, key);
  counts_[i == keys_.size() ? other_ : i].add(n);
}

uint64_t counter_table::value(std::string_view key) const noexcept {
  auto i = find(keys_, key);
  return counts_[i == keys_.size() ? other_ : i].value();
}

std::vector<std::pair<std::string, uint64_t>> counter_table::snapshot() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  out.reserve(keys_.size());
  for (size_t i = 0; i < keys_.size(); ++i) {
    out.emplace_back(keys_[i], counts_[i].value());
  }
  return out;
}

// -- histogram_table ------------------------------------------------------------

histogram_table::histogram_table(std::vector<label_pair> keys,
                                 const std::vector<double>& upper_bounds) {
  std::set<std::string> firsts{other_label};
  for (const auto& key : keys) {
    firsts.insert(key.first);
  }
  for (const auto& first : firsts) {
    keys.emplace_back(first, other_label);
  }
  keys_ = sorted_unique(std::move(keys));
  rows_.reserve(keys_.size());
  for (size_t i = 0; i < keys_.size(); ++i) {
    rows_.push_back(std::make_unique<metrics::atomic_histogram>(upper_bounds));
  }
}

size_t histogram_table::index_of(std::string_view a, std::string_view b) const noexcept {
  if (auto i = find(keys_, pair_probe{a, b}); i != keys_.size()) {
    return i;
  }
  if (auto i = find(keys_, pair_probe{a, other_label}); i != keys_.size()) {
    return i;
  }
  return find(keys_, pair_probe{other_label, other_label});
}

metrics::atomic_histogram& histogram_table::at(std::string_view a, std::string_view b) noexcept {
  return *rows_[index_of(a, b)];
}

} // namespace berth
