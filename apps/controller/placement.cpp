#include "apps/controller/placement.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace berth::controller {

namespace {

std::vector<std::string> candidates_of(const placement_request& req, const capacity_map& capacity) {
  std::vector<std::string> out;
  for (const auto* list : {&req.preferred, &req.requisite}) {
    for (const auto& node : *list) {
      if (std::find(out.begin(), out.end(), node) == out.end()) {
        out.push_back(node);
      }
    }
  }
  if (!out.empty()) {
    return out;
  }
  std::vector<std::pair<uint64_t, std::string>> by_room;
  for (const auto& [node, backends] : capacity) {
    auto it = backends.find(req.backend);
    by_room.emplace_back(it == backends.end() ? 0 : it->second, node);
  }
  std::sort(by_room.begin(), by_room.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (auto& [room, node] : by_room) {
    out.push_back(std::move(node));
  }
  return out;
}

} // namespace

caf::expected<std::string> choose_node(const placement_request& req, const capacity_map& capacity) {
  auto candidates = candidates_of(req, capacity);
  if (!req.pinned.empty()) {
    bool required = !req.preferred.empty() || !req.requisite.empty();
    if (required && std::find(candidates.begin(), candidates.end(), req.pinned) == candidates.end()) {
      return make_error(ec::resource_exhausted,
                        "the content source is on node " + quote_input(req.pinned)
                          + ", which the accessibility requirements exclude (they allow "
                          + quote_input(candidates.front())
                          + (candidates.size() > 1 ? " and " + std::to_string(candidates.size() - 1) + " more" : "")
                          + "); a clone or restore stays on its source's node");
    }
    candidates = {req.pinned};
  }
  if (candidates.empty()) {
    return make_error(ec::resource_exhausted,
                      "no node has reported its capacity yet (capacity.berth.csi.dev/"
                        + req.backend + " on its Node): is berthd running with --kubernetes?");
  }
  std::string why;
  for (const auto& node : candidates) {
    auto reported = capacity.find(node);
    std::string reason;
    if (reported == capacity.end()) {
      reason = "has not reported its capacity";
    } else if (auto it = reported->second.find(req.backend); it == reported->second.end()) {
      reason = "has no backend " + quote_input(req.backend);
    } else if (it->second < req.bytes) {
      reason = "has " + std::to_string(it->second) + " bytes free";
    } else {
      return node;
    }
    why += (why.empty() ? "" : "; ") + quote_input(node) + " " + reason;
  }
  return make_error(ec::resource_exhausted, "no node can hold " + std::to_string(req.bytes)
                                              + " bytes of backend " + quote_input(req.backend)
                                              + ": " + why);
}

} // namespace berth::controller
