#include "protocols/admin/detail/delta_import.hpp"

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include <boost/beast/http.hpp>
#include <fcntl.h>
#include <spdlog/spdlog.h>

#include "backends/block_delta_reader.hpp"
#include "core/fd_io.hpp"
#include "core/json_text.hpp"
#include "core/text.hpp"
#include "core/unique_fd.hpp"

namespace berth::admin::detail {

namespace http = boost::beast::http;
using boost::system::error_code;

namespace {

constexpr size_t chunk_bytes = 1 << 16;

/// The checks a delta's header allows before the rest of it is read: its base is a Docker
/// block snapshot here, the very one it was taken since (by its time and size), and of the
/// volume's backend, and the delta's volume kept the base's size.
caf::expected<opened_snapshot> check_base(const delta_header& h, const volume_record& onto,
                                          const diff_sources& src) {
  auto base = open_snapshot(src, h.base, "base");
  if (!base) {
    return base.error();
  }
  if (base->rec->created_at != h.base_created_at) {
    return make_error(ec::failed_precondition,
                      "the delta of volume " + quote_input(h.volume) + " is since snapshot "
                        + quote_input(h.base) + " taken at " + h.base_created_at
                        + ", but the snapshot of that name here was taken at "
                        + base->rec->created_at + ": it is another snapshot");
  }
  if (base->image->size() != h.base_size_bytes) {
    return make_error(ec::failed_precondition,
                      "the delta's base, snapshot " + quote_input(h.base) + ", was "
                        + std::to_string(h.base_size_bytes) + " bytes; the one here is "
                        + std::to_string(base->image->size()) + ": it is another snapshot");
  }
  if (auto resized = check_delta_size(h)) {
    return resized;
  }
  if (base->rec->backend != onto.backend) {
    return make_error(ec::failed_precondition,
                      "volume " + quote_input(onto.name) + " is a " + onto.backend
                        + " volume and snapshot " + quote_input(h.base) + " a " + base->rec->backend
                        + " one: a delta applies to a volume made from its base snapshot");
  }
  return base;
}

} // namespace

caf::error run_delta_import(transfer& t, const std::string& name, const std::string& imports_dir,
                            const diff_sources& src) {
  const std::string what = "import of a delta onto volume " + name;
  auto refuse = [&](const caf::error& err) {
    spdlog::warn("{}: {}; nothing was changed", what, describe(err));
    return t.refuse(err);
  };
  http::request_parser<http::buffer_body> parser;
  // The reader bounds the delta: its ranges lie within its header's size, which must be its
  // base's (check_base).
  parser.body_limit(boost::none);
  error_code err;
  http::read_header(t.sock, t.buf, parser, err);
  if (err) {
    return refuse(make_error(ec::invalid_argument, what + ": malformed request: " + err.message()));
  }
  auto onto = t.ask<volume_record>(atom::get_v, name, record_owner::docker);
  if (!onto) {
    return refuse(onto.error()); // before a byte of the delta is read
  }
  if (onto->kind != record_kind::volume) {
    const auto why = " (it is a snapshot; a delta applies to a volume made from one)";
    return refuse(make_error(ec::not_found, "no such volume: " + name + why));
  }
  auto staging = make_staging(imports_dir, what);
  if (!staging) {
    return refuse(staging.error());
  }
  const auto spool = *staging + "/delta";
  unique_fd out{::open(spool.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)};
  if (!out) {
    drop_staging(*staging);
    return refuse(make_error(ec::backend_failure,
                             what + ": cannot make " + spool + ": " + std::strerror(errno)));
  }
  auto spool_failed = [&] {
    return make_error(errno == ENOSPC ? ec::out_of_range : ec::backend_failure,
                      what + ": cannot spool the delta to " + spool + ": " + std::strerror(errno));
  };
  delta_reader reader;
  std::optional<opened_snapshot> base;
  caf::error failed;
  std::vector<char> chunk(chunk_bytes);
  uint64_t bytes = 0;
  while (!failed && !parser.is_done()) {
    auto n = t.read_body(parser, chunk, err);
    if (err) {
      failed = make_error(ec::aborted,
                          what + ": the delta broke off after " + std::to_string(bytes) + " bytes ("
                            + err.message() + ")");
      break;
    }
    bytes += n;
    failed = reader.feed(chunk.data(), n);
    if (!failed && !base && reader.header()) {
      auto checked = check_base(*reader.header(), *onto, src);
      if (checked) {
        base.emplace(std::move(*checked));
      } else {
        failed = checked.error();
      }
    }
    if (!failed && !write_all(out.get(), chunk.data(), n)) {
      failed = spool_failed();
    }
  }
  if (!failed) {
    failed = reader.finish();
  }
  out = unique_fd{};
  if (failed) {
    drop_staging(*staging);
    return refuse(failed);
  }
  const auto& h = *reader.header();
  auto applied = t.ask<atom::ok>(atom::import_delta_v, name, spool, volume_record{*base->rec});
  drop_staging(*staging);
  if (!applied) {
    return refuse(applied.error());
  }
  spdlog::info("volume {} holds the delta of volume {} since snapshot {}: {} ranges, {} bytes",
               name, h.volume, h.base, reader.ranges(), reader.changed_bytes());
  answer(t.sock, 200,
         "{\"volume\":" + json_quote(name) + ",\"delta_of\":" + json_quote(h.volume)
           + ",\"base\":" + json_quote(h.base) + ",\"ranges\":" + std::to_string(reader.ranges())
           + ",\"changed_bytes\":" + std::to_string(reader.changed_bytes()) + "}");
  return {};
}

} // namespace berth::admin::detail
