#include "actors/modify_rules.hpp"

#include "core/errors.hpp"

namespace berth {

modification outstanding(const volume_record& rec, const modification& asked) {
  modification out;
  if (asked.bytes > rec.capacity_bytes) {
    out.bytes = asked.bytes;
  }
  for (const auto& [key, value] : asked.parameters) {
    auto it = rec.mutable_parameters.find(key);
    if (it == rec.mutable_parameters.end() || it->second != value) {
      out.parameters.emplace(key, value);
    }
  }
  return out;
}

bool is_empty(const modification& m) {
  return m.bytes == 0 && m.parameters.empty();
}

caf::error check_shrink(const volume_record& rec, uint64_t bytes) {
  if (bytes != 0 && bytes < rec.capacity_bytes) {
    return make_error(ec::out_of_range, "volume " + rec.name + " has "
                                          + std::to_string(rec.capacity_bytes)
                                          + " bytes; shrinking to " + std::to_string(bytes)
                                          + " is not supported");
  }
  return {};
}

caf::error check_conflict(const std::string& volume, const modification& window,
                          const modification& wanted, const modification& asked) {
  auto refuse = [&](const std::string& mine, const std::string& theirs) {
    return make_error(ec::aborted, "volume " + volume + ": " + mine + " conflicts with " + theirs
                                     + ", asked earlier and merged into the modification "
                                       "now pending; retry once it is applied");
  };
  if (wanted.bytes != 0 && window.bytes != 0 && wanted.bytes != window.bytes) {
    return refuse("size " + std::to_string(wanted.bytes) + " bytes",
                  "size " + std::to_string(window.bytes) + " bytes");
  }
  for (const auto& [key, value] : asked.parameters) {
    auto it = window.parameters.find(key);
    if (it != window.parameters.end() && it->second != value) {
      return refuse(key + "=" + value, key + "=" + it->second);
    }
  }
  return {};
}

void merge_into(modification& window, const modification& wanted) {
  if (wanted.bytes != 0) {
    window.bytes = wanted.bytes;
  }
  for (const auto& [key, value] : wanted.parameters) {
    window.parameters[key] = value;
  }
}

volume_record apply_modification(volume_record rec, const modification& m) {
  if (m.bytes != 0) {
    rec.capacity_bytes = m.bytes;
  }
  for (const auto& [key, value] : m.parameters) {
    rec.mutable_parameters[key] = value;
  }
  ++rec.modifications;
  return rec;
}

std::string describe(const modification& m) {
  std::string out;
  if (m.bytes != 0) {
    out = "size " + std::to_string(m.bytes) + " bytes";
  }
  for (const auto& [key, value] : m.parameters) {
    out += (out.empty() ? "" : ", ") + key + "=" + value;
  }
  return out.empty() ? "nothing" : out;
}

} // namespace berth
