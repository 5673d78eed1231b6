#include "protocols/admin/detail/transfer_runs.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>
#include <rapidjson/document.h>
#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "core/crash_point.hpp"
#include "core/fd_io.hpp"
#include "core/names.hpp"
#include "core/record_json.hpp"
#include "core/text.hpp"
#include "protocols/admin/admin_api.hpp"
#include "protocols/admin/admin_codec.hpp"

namespace berth::admin::detail {

namespace fs = std::filesystem;
namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

namespace {

constexpr const char* options_header = "Berth-Options";
constexpr const char* consistency_header = "Berth-Consistency";
constexpr size_t chunk_bytes = 1 << 16;

/// Berth-Options: a JSON object of strings; none or empty is no option.
caf::expected<option_map> decode_options(std::string_view text) {
  option_map out;
  if (text.empty()) {
    return out;
  }
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return make_error(ec::invalid_argument, std::string{"header "} + options_header
                                              + " is not a JSON object of strings: "
                                              + quote_input(std::string{text}));
  }
  for (const auto& m : doc.GetObject()) {
    if (!m.value.IsString()) {
      return make_error(ec::invalid_argument, std::string{"header "} + options_header
                                                + ": option " + quote_input(m.name.GetString())
                                                + " is not a string");
    }
    out[m.name.GetString()] = m.value.GetString();
  }
  return out;
}

/// The first lines of what tar said, for an error.
std::string first_lines(const std::string& text, size_t lines) {
  size_t end = 0;
  for (size_t i = 0; i < lines && end != std::string::npos; ++i) {
    end = text.find('\n', end == 0 ? 0 : end + 1);
  }
  auto out = end == std::string::npos ? text : text.substr(0, end);
  for (auto& c : out) {
    c = c == '\n' ? ';' : c;
  }
  return out;
}

} // namespace

caf::expected<std::string> make_staging(const std::string& imports_dir, const std::string& what) {
  auto dir = imports_dir + "/" + random_id();
  std::error_code made;
  fs::create_directories(imports_dir, made);
  fs::permissions(imports_dir, fs::perms(0700), fs::perm_options::replace, made);
  if (made || ::mkdir(dir.c_str(), 0700) != 0) {
    return make_error(ec::backend_failure,
                      what + ": cannot make its staging directory " + dir + ": "
                        + (made ? made.message() : std::string{std::strerror(errno)}));
  }
  return dir;
}

void drop_staging(const std::string& dir) {
  ::umount2((dir + "/mnt").c_str(), MNT_DETACH); // nothing mounted: EINVAL or ENOENT
  std::error_code err;
  fs::remove_all(dir, err);
  if (err) {
    spdlog::warn("import: cannot delete its staging directory {} (the next start does): {}",
                 dir, err.message());
  }
}

std::string random_id() {
  std::ifstream random{"/dev/urandom", std::ios::binary};
  unsigned char bytes[8] = {};
  random.read(reinterpret_cast<char*>(bytes), sizeof bytes);
  static constexpr char hex[] = "0123456789abcdef";
  std::string id;
  for (unsigned char c : bytes) {
    id += hex[c >> 4];
    id += hex[c & 15];
  }
  return id;
}

/// Writes a whole JSON answer and ends the connection's part in it.
void answer(unix_socket& sock, unsigned status, std::string body) {
  http::response<http::string_body> res{static_cast<http::status>(status), 11};
  res.set(http::field::server, "berth");
  res.set(http::field::content_type, "application/json");
  res.keep_alive(false);
  res.body() = std::move(body);
  res.prepare_payload();
  error_code ignored;
  http::write(sock, res, ignored);
}

void transfer::fail(const caf::error& err) {
  answer(sock, http_status_of(err), admin::encode_error(describe(err)));
}

caf::expected<std::string> transfer::read_bodiless(const std::string& what) {
  http::request_parser<http::empty_body> parser;
  error_code err;
  http::read(sock, buf, parser, err);
  if (err) {
    return refuse(
      make_error(ec::invalid_argument,
                 what + ": malformed request (" + err.message() + "); it takes no body"));
  }
  return std::string{parser.get().target()};
}

void transfer::close_export(const std::string& name, const std::string& id,
                            const std::string& what) {
  if (auto closed = ask<atom::ok>(atom::export_close_v, name, id); !closed) {
    spdlog::warn("{}: its copy stays until the next start: {}", what, describe(closed.error()));
  }
}

size_t transfer::read_body(http::request_parser<http::buffer_body>& parser,
                           std::vector<char>& chunk, error_code& err) {
  parser.get().body().data = chunk.data();
  parser.get().body().size = chunk.size();
  http::read(sock, buf, parser, err);
  if (err == http::error::need_buffer) {
    err = {};
  }
  return err ? 0 : chunk.size() - parser.get().body().size;
}

void transfer::start_chunks(const char* content_type, const std::string& consistency,
                            error_code& err) {
  http::response<http::empty_body> res{http::status::ok, 11};
  res.set(http::field::server, "berth");
  res.set(http::field::content_type, content_type);
  if (!consistency.empty()) {
    res.set(consistency_header, consistency);
  }
  res.keep_alive(false);
  res.chunked(true);
  http::response_serializer<http::empty_body> head{res};
  http::write_header(sock, head, err);
}

/// GET /v1/volumes/NAME/export. Returns how it ended, for the count.
caf::error run_export(transfer& t, const std::string& name, const tar_watch& running) {
  if (auto request = t.read_bodiless("export of volume " + name); !request) {
    return request.error();
  }
  if (!is_valid_volume_name(name)) {
    return t.refuse(make_error(ec::invalid_argument, invalid_name_message("volume", name)));
  }
  const auto id = random_id();
  auto view = t.ask<export_view>(atom::export_open_v, name, id, export_form::tree);
  if (!view) {
    return t.refuse(view.error());
  }
  auto close_export = [&] { t.close_export(name, id, "export of volume " + name); };
  auto tar = tar_process::create(view->path);
  if (!tar) {
    close_export();
    return t.refuse(tar.error());
  }
  running(&*tar);
  const std::string consistency = view->consistency.empty() ? "consistent" : view->consistency;
  error_code err;
  t.start_chunks("application/x-tar", consistency, err);
  bool client_took_all = !err;
  bool read_failed = false;
  uint64_t bytes = 0;
  std::vector<char> chunk(chunk_bytes);
  while (client_took_all) {
    auto n = ::read(tar->data_fd(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      read_failed = n < 0;
      break;
    }
    asio::write(t.sock, http::make_chunk(asio::buffer(chunk.data(), static_cast<size_t>(n))), err);
    client_took_all = !err;
    bytes += static_cast<uint64_t>(n);
    // A crash here leaves the export's copy (and a block copy's mount), which the next
    // start deletes.
    test_crash_point("export-streaming");
  }
  if (!client_took_all) {
    tar->kill();
  }
  running(nullptr);
  auto ended = tar->wait();
  caf::error outcome;
  if (!client_took_all) {
    outcome = make_error(ec::aborted, "export of volume " + name + ": the client stopped "
                                        "reading after " + std::to_string(bytes) + " bytes ("
                                        + err.message() + ")");
  } else if (read_failed || ended.exit_code != 0) {
    outcome = make_error(ec::backend_failure, "export of volume " + name + ": tar failed (exit "
                                                + std::to_string(ended.exit_code) + "): "
                                                + first_lines(ended.errors, 3));
  } else {
    asio::write(t.sock, http::make_chunk_last(), err);
    if (err) {
      outcome = make_error(ec::aborted, "export of volume " + name + ": its end could not be "
                                          "written: " + err.message());
    }
  }
  close_export();
  if (outcome) {
    // The chunked stream ends without its last chunk: the client sees it cut short.
    spdlog::warn("{}", describe(outcome));
  } else {
    spdlog::info("volume {} exported: {} bytes of tar ({})", name, bytes, consistency);
  }
  return outcome;
}

/// POST /v1/volumes/NAME/import.
caf::error run_import(transfer& t, const std::string& name, const std::string& imports_dir,
                      const tar_watch& running) {
  http::request_parser<http::buffer_body> parser;
  parser.body_limit(boost::none); // the volume's size, or its filesystem's room, bounds it
  error_code err;
  http::read_header(t.sock, t.buf, parser, err);
  if (err) {
    return t.refuse(make_error(
      ec::invalid_argument, "import of volume " + name + ": malformed request: " + err.message()));
  }
  auto options = decode_options(std::string_view{parser.get()[options_header]});
  if (!options) {
    return t.refuse(options.error());
  }
  if (auto checked = t.ask<atom::ok>(atom::import_check_v, name, *options); !checked) {
    return t.refuse(checked.error()); // before a byte of the tar is read
  }
  auto staging = make_staging(imports_dir, "import of volume " + name);
  if (!staging) {
    return t.refuse(staging.error());
  }
  const auto dir = *staging;
  const auto data = dir + "/data";
  if (::mkdir(data.c_str(), 0755) != 0) {
    int e = errno;
    drop_staging(dir);
    return t.refuse(
      make_error(ec::backend_failure,
                 "import of volume " + name + ": cannot make " + data + ": " + std::strerror(e)));
  }
  auto tar = tar_process::extract(data);
  if (!tar) {
    drop_staging(dir);
    return t.refuse(tar.error());
  }
  running(&*tar);
  std::vector<char> chunk(chunk_bytes);
  uint64_t bytes = 0;
  bool tar_took_all = true;
  while (!parser.is_done()) {
    auto n = t.read_body(parser, chunk, err);
    if (err) {
      break;
    }
    bytes += n;
    if (!write_all(tar->data_fd(), chunk.data(), n)) {
      tar_took_all = false; // tar ended early: it says why below
      break;
    }
  }
  running(nullptr);
  auto ended = tar->wait();
  caf::error failed;
  if (err) {
    failed = make_error(ec::aborted, "import of volume " + name + ": the tar broke off after "
                                       + std::to_string(bytes) + " bytes (" + err.message()
                                       + "); nothing was made");
  } else if (ended.exit_code != 0 || !tar_took_all
             || ended.errors.find("Removing leading") != std::string::npos) {
    failed = make_error(ec::invalid_argument,
                        "import of volume " + name + ": the tar was refused, and nothing was "
                          "made: " + (ended.errors.empty() ? "tar exit " + std::to_string(ended.exit_code)
                                                           : first_lines(ended.errors, 3))
                          + " (a member outside the volume, such as ../ or an absolute path, "
                            "is refused)");
  }
  if (failed) {
    drop_staging(dir);
    spdlog::warn("{}", describe(failed));
    return t.refuse(failed);
  }
  // A crash here leaves the staging directory, which the next start deletes.
  test_crash_point("import-extracted");
  auto created = t.ask<atom::ok>(atom::create_v, name, *options, data);
  drop_staging(dir);
  if (!created) {
    spdlog::warn("import of volume {}: {}", name, describe(created.error()));
    return t.refuse(created.error());
  }
  auto rec = t.ask<volume_record>(atom::get_v, name);
  if (!rec) {
    return t.refuse(rec.error());
  }
  spdlog::info("volume {} imported from {} bytes of tar", name, bytes);
  answer(t.sock, 200, record_to_json(*rec, record_shape::full));
  return {};
}

} // namespace berth::admin::detail
