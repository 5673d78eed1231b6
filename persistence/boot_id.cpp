#include "persistence/boot_id.hpp"

#include <fstream>

namespace berth {

std::string read_boot_id(const std::string& path) {
  std::ifstream in(path);
  std::string id;
  std::getline(in, id);
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ' || id.back() == '\r')) {
    id.pop_back();
  }
  return id;
}

} // namespace berth
