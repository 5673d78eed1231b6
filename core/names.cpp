#include "core/names.hpp"

#include <cctype>

#include "core/limits.hpp"
#include "core/text.hpp"

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

std::string invalid_name_message(std::string_view what, std::string_view name) {
  return "invalid " + std::string{what} + " name " + quote_input(name) + ": must match "
         + volume_name_grammar;
}

bool is_valid_mount_id(std::string_view id) {
  if (id.empty() || id.size() > limits::max_mount_id_bytes) {
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
