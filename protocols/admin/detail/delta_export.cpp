#include "protocols/admin/detail/delta_export.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include "backends/block_delta.hpp"
#include "core/text.hpp"

namespace berth::admin::detail {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

namespace {

/// The answer's chunks: small writes (the ranges' heads) gathered up to this many bytes.
constexpr size_t chunk_bytes = 1 << 16;

} // namespace

caf::error run_delta_export(transfer& t, const std::string& name, const diff_sources& src) {
  const std::string what = "export of volume " + name + " since a snapshot";
  auto request = t.read_bodiless(what);
  if (!request) {
    return request.error();
  }
  auto since =
    query_value(*request, "since", what, "the snapshot of the volume that the delta starts from");
  if (!since) {
    return t.refuse(since.error());
  }
  auto base = open_snapshot(src, *since, "since");
  if (!base) {
    return t.refuse(base.error());
  }
  if (base->rec->source.name != name) {
    return t.refuse(make_error(
      ec::invalid_argument,
      "snapshot " + quote_input(*since) + " is of volume " + quote_input(base->rec->source.name)
        + ", not of " + quote_input(name) + ": a delta is since a snapshot of the volume itself"));
  }
  const auto id = random_id();
  auto view = t.ask<export_view>(atom::export_open_v, name, id, export_form::image);
  if (!view) {
    return t.refuse(view.error());
  }
  auto close_export = [&] { t.close_export(name, id, what); };
  auto copy = image_map::open(view->path);
  if (!copy) {
    close_export();
    return t.refuse(copy.error());
  }
  const std::string consistency = view->consistency.empty() ? "consistent" : view->consistency;
  error_code err;
  t.start_chunks("application/octet-stream", consistency, err);
  std::string pending;
  auto flush = [&] {
    if (!err && !pending.empty()) {
      asio::write(t.sock, http::make_chunk(asio::buffer(pending)), err);
    }
    pending.clear();
    return !err;
  };
  uint64_t bytes = 0;
  delta_writer out{[&](const char* data, size_t size) {
    bytes += size;
    pending.append(data, size);
    return pending.size() < chunk_bytes || flush();
  }};
  delta_header h;
  h.volume = name;
  h.base = base->rec->name;
  h.base_created_at = base->rec->created_at;
  h.base_size_bytes = base->image->size();
  h.size_bytes = copy->size();
  h.consistency = view->consistency;
  caf::error failed;
  uint64_t ranges = 0;
  bool sent = !err && out.header(h);
  for (uint64_t from = 0; sent;) {
    auto page = changed_ranges(*base->image, *copy, from, diff_page_ranges);
    if (!page) {
      failed = page.error();
      break;
    }
    for (const auto& r : page->ranges) {
      auto put = out.range(r, copy->fd());
      if (!put) {
        failed = put.error();
      }
      sent = put && *put;
      if (!sent) {
        break;
      }
      ++ranges;
    }
    if (page->done || !sent) {
      break;
    }
    from = page->next;
  }
  if (!failed && sent && out.end() && flush()) {
    asio::write(t.sock, http::make_chunk_last(), err);
  }
  if (!failed && err) {
    failed = make_error(ec::aborted,
                        what + ": the client stopped reading after " + std::to_string(bytes)
                          + " bytes (" + err.message() + ")");
  }
  close_export();
  if (failed) {
    // The chunked answer ends without its last chunk: the client sees it cut short.
    spdlog::warn("{} {}: {}", what, *since, describe(failed));
    return failed;
  }
  spdlog::info("volume {} exported since snapshot {}: {} ranges, {} bytes of delta ({})", name,
               *since, ranges, bytes, consistency);
  return {};
}

} // namespace berth::admin::detail
