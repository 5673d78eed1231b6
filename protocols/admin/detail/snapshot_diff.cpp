#include "protocols/admin/detail/snapshot_diff.hpp"

#include <optional>
#include <string_view>

#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include "backends/block_ranges.hpp"
#include "core/json_text.hpp"
#include "core/names.hpp"
#include "core/snapshot_pair.hpp"
#include "core/text.hpp"

namespace berth::admin::detail {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

namespace {

/// The answer's text before its ranges.
std::string head_of(const volume_record& base, const volume_record& target, uint64_t size) {
  return "{\"base\":" + json_quote(base.name) + ",\"target\":" + json_quote(target.name)
    + ",\"volume\":" + json_quote(target.source.name) + ",\"size_bytes\":" + std::to_string(size)
    + ",\"block_bytes\":" + std::to_string(delta_block_bytes) + ",\"ranges\":[";
}

} // namespace

caf::expected<std::string> query_value(std::string_view target, std::string_view key,
                                       const std::string& what, const std::string& meaning) {
  auto q = target.find('?');
  std::string_view query = q == std::string_view::npos ? std::string_view{} : target.substr(q + 1);
  const std::string form = std::string{key} + "=SNAPSHOT";
  std::optional<std::string> value;
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.substr(0, key.size() + 1) != std::string{key} + "=" || value) {
      std::string refusal = what;
      refusal += ": the query takes " + form + " once and nothing else, not ";
      refusal += quote_input(std::string{pair});
      return make_error(ec::invalid_argument, refusal);
    }
    value = std::string{pair.substr(key.size() + 1)};
  }
  if (!value) {
    return make_error(ec::invalid_argument, what + ": " + form + " is required: " + meaning);
  }
  return *value;
}

caf::expected<opened_snapshot> open_snapshot(const diff_sources& src, const std::string& name,
                                             const char* role) {
  if (!is_valid_volume_name(name)) {
    return make_error(ec::invalid_argument, invalid_name_message("snapshot", name));
  }
  opened_snapshot out;
  out.rec = src.directory->find(name);
  if (!out.rec || owner_of(*out.rec) != record_owner::docker
      || out.rec->kind != record_kind::snapshot) {
    return make_error(ec::not_found,
                      std::string{role} + " snapshot " + quote_input(name)
                        + ": no Docker snapshot of that name (berthctl snapshot "
                          "ls lists them)");
  }
  auto not_block = [&] {
    return make_error(ec::failed_precondition,
                      std::string{role} + " snapshot " + quote_input(name) + " is a "
                        + out.rec->backend
                        + " snapshot; changed blocks are known only between the images "
                          "of block snapshots (volumes made with -o backend=block)");
  };
  auto b = src.backends.find(out.rec->backend);
  if (b == src.backends.end()) {
    return not_block();
  }
  auto image = b->second->open_snapshot_image(*out.rec);
  if (!image && image.error() == ec::unsupported) {
    return not_block();
  }
  if (!image) {
    return image.error();
  }
  out.image.emplace(std::move(*image));
  return out;
}

caf::error run_diff(transfer& t, const std::string& target, const diff_sources& src) {
  auto request = t.read_bodiless("snapshot diff");
  if (!request) {
    return request.error();
  }
  auto base_name = query_value(*request, "base", "snapshot diff", "the older snapshot to compare");
  if (!base_name) {
    return t.refuse(base_name.error());
  }
  auto base = open_snapshot(src, *base_name, "base");
  if (!base) {
    return t.refuse(base.error());
  }
  auto to = open_snapshot(src, target, "target");
  if (!to) {
    return t.refuse(to.error());
  }
  if (auto refused = check_delta_pair(*base->rec, *to->rec, "base snapshot", "target snapshot")) {
    return t.refuse(refused);
  }
  error_code err;
  t.start_chunks("application/json", "", err);
  auto send = [&](const std::string& text) {
    if (!err) {
      asio::write(t.sock, http::make_chunk(asio::buffer(text)), err);
    }
  };
  send(head_of(*base->rec, *to->rec, to->image->size()));
  delta_cost cost;
  uint64_t changed = 0;
  uint64_t from = 0;
  bool first = true;
  caf::error failed;
  while (!err) {
    auto page = changed_ranges(*base->image, *to->image, from, diff_page_ranges, &cost);
    if (!page) {
      failed = page.error();
      break;
    }
    std::string text;
    for (const auto& r : page->ranges) {
      text += first ? "{\"offset\":" : ",{\"offset\":";
      text += std::to_string(r.offset) + ",\"length\":" + std::to_string(r.length) + "}";
      changed += r.length;
      first = false;
    }
    if (!text.empty()) {
      send(text);
    }
    if (page->done) {
      break;
    }
    from = page->next;
  }
  if (!failed && !err) {
    send("],\"changed_bytes\":" + std::to_string(changed)
         + ",\"shared_blocks\":" + std::to_string(cost.shared_blocks)
         + ",\"read_blocks\":" + std::to_string(cost.read_blocks) + "}");
    if (!err) {
      asio::write(t.sock, http::make_chunk_last(), err);
    }
  }
  if (!failed && err) {
    failed = make_error(ec::aborted,
                        "snapshot diff of " + target + " against " + *base_name
                          + ": the client stopped reading (" + err.message() + ")");
  }
  if (failed) {
    // The chunked answer ends without its last chunk: the client sees it cut short.
    spdlog::warn("snapshot diff of {} against {}: {}", target, *base_name, describe(failed));
    return failed;
  }
  spdlog::info("snapshot diff of {} against {}: {} bytes changed ({} blocks shared, {} read)",
               target, *base_name, changed, cost.shared_blocks, cost.read_blocks);
  return {};
}

} // namespace berth::admin::detail
