#include "backends/detail/mount_elements.hpp"

#include <arpa/inet.h>

namespace berth::detail {

std::string join_names(const name_set& names) {
  std::string out;
  for (const auto& n : names) {
    out += out.empty() ? "" : ", ";
    out += n;
  }
  return out;
}

std::vector<element> split_o(const std::string& o) {
  std::vector<element> out;
  size_t pos = 0;
  while (pos <= o.size()) {
    size_t comma = o.find(',', pos);
    std::string text = o.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t eq = text.find('=');
    element e{text.substr(0, eq), text, eq == std::string::npos ? "" : text.substr(eq + 1)};
    out.push_back(std::move(e));
    if (comma == std::string::npos) {
      break;
    }
    pos = comma + 1;
  }
  return out;
}

std::string join_elements(const std::vector<element>& elements) {
  std::string out;
  for (const auto& e : elements) {
    out += out.empty() ? "" : ",";
    out += e.text;
  }
  return out;
}

const element* find_element(const std::vector<element>& elements, const std::string& key) {
  for (const auto& e : elements) {
    if (e.key == key) {
      return &e;
    }
  }
  return nullptr;
}

bool is_ip_address(const std::string& s) {
  unsigned char buf[sizeof(struct in6_addr)];
  return ::inet_pton(AF_INET, s.c_str(), buf) == 1 || ::inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

} // namespace berth::detail
