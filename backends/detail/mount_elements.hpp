#pragma once

// The elements of a local volume's `o` option ("key" or "key=value", comma
// separated), shared by the planning of local mounts (local_options.cpp) and of
// network mounts (network_plans.cpp).

#include <set>
#include <string>
#include <vector>

namespace berth::detail {

using name_set = std::set<std::string, std::less<>>;

/// "a, b, c": an allow-list for an error message.
std::string join_names(const name_set& names);

struct element {
  std::string key;
  std::string text; ///< "key" or "key=value"
  std::string value;
};

/// Splits `o` at commas; an empty `o` is one empty element (the caller refuses it).
std::vector<element> split_o(const std::string& o);

/// The elements' texts joined by commas: a data string for mount(2) or `-o`.
std::string join_elements(const std::vector<element>& elements);

/// The first element with `key`, or nullptr.
const element* find_element(const std::vector<element>& elements, const std::string& key);

/// True for an IPv4 or (unbracketed) IPv6 address.
bool is_ip_address(const std::string& s);

} // namespace berth::detail
