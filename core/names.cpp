#include "core/names.hpp"

#include <cctype>

#include "core/limits.hpp"

namespace berth {

bool is_valid_volume_name(std::string_view name) {
  if (name.empty() || name.size() > limits::max_name_bytes) {
    return false;
  }
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(name.front())) {
    return false;
  }
  for (char c : name) {
    if (!alnum(c) && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

bool is_valid_mount_id(std::string_view id) {
  if (id.empty() || id.size() > 256) {
    return false;
  }
  for (char c : id) {
    if (std::iscntrl(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

} // namespace berth
