#include "persistence/boot_id.hpp"

#include <cctype>
#include <fstream>

namespace berth {

std::string read_boot_id(const std::string& path) {
  std::ifstream in(path);
  std::string id;
  if (!in || !std::getline(in, id)) {
    return {};
  }
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!id.empty() && is_space(id.back())) {
    id.pop_back();
  }
  size_t first = 0;
  while (first < id.size() && is_space(id[first])) {
    ++first;
  }
  return id.substr(first);
}

} // namespace berth
