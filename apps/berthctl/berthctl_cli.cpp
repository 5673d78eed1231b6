#include "apps/berthctl/berthctl_cli.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <ostream>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "apps/berthctl/berthctl_inspect.hpp"
#include "apps/berthctl/berthctl_status.hpp"
#include "apps/berthctl/berthctl_top.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/record_json.hpp"
#include "protocols/http/unix_http_client.hpp"

namespace berth::cli {

namespace {

caf::error usage_error(std::string message) {
  return make_error(ec::invalid_argument, std::move(message));
}

/// The message of an error reply: its "error" (admin) or "Err" field, or the body.
std::string error_of(const http_response& res) {
  rapidjson::Document doc;
  doc.Parse(res.body.c_str(), res.body.size());
  if (!doc.HasParseError() && doc.IsObject()) {
    for (const char* key : {"error", "Err"}) {
      auto it = doc.FindMember(key);
      if (it != doc.MemberEnd() && it->value.IsString()) {
        return it->value.GetString();
      }
    }
  }
  return "HTTP " + std::to_string(res.status) + ": " + res.body.substr(0, 200);
}

/// The berth code of an admin API error status (admin_api's http_status_of, reversed
/// where it is one to one).
ec http_error_code(unsigned status) {
  switch (status) {
    case 400: return ec::invalid_argument;
    case 404: return ec::not_found;
    case 409: return ec::failed_precondition;
    case 429: return ec::resource_exhausted;
    case 503: return ec::unavailable;
    case 504: return ec::timeout;
    default: return ec::internal;
  }
}

std::string mount_ids(const volume_record& rec, bool shorten) {
  if (rec.mounts.empty()) {
    return "-";
  }
  std::string out;
  for (const auto& [id, count] : rec.mounts) {
    if (!out.empty()) {
      out += ',';
    }
    out += (shorten ? short_id(id) : id) + ':' + std::to_string(count);
  }
  return out;
}

std::string path_of(const volume_record& rec) {
  return rec.mounted && !rec.mountpoint.empty() ? rec.mountpoint : "-";
}

/// "k=v, k2=v2", or "-" when empty.
std::string pairs(const option_map& m) {
  std::string out;
  for (const auto& [k, v] : m) {
    out += (out.empty() ? "" : ", ") + k + "=" + v;
  }
  return out.empty() ? "-" : out;
}

/// The admin API body of a resize, modify or release.
std::string change_body(const options& opts) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  w.StartObject();
  if (opts.cmd == command::release) {
    w.Key("id");
    w.String(opts.mount_id.c_str(), static_cast<rapidjson::SizeType>(opts.mount_id.size()));
  } else if (opts.cmd == command::resize) {
    w.Key("size_bytes");
    w.Uint64(opts.size_bytes);
  } else {
    w.Key("parameters");
    w.StartObject();
    for (const auto& [k, v] : opts.parameters) {
      w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
      w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
    }
    w.EndObject();
  }
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

} // namespace

caf::expected<options> parse_args(const std::vector<std::string>& args) {
  options opts;
  std::vector<std::string> positional;
  bool help = false;
  bool version = false;
  bool interval = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      help = true;
    } else if (arg == "--version") {
      version = true;
    } else if (arg == "--json") {
      opts.json = true;
    } else if (arg == "--socket") {
      if (i + 1 == args.size()) {
        return usage_error("--socket needs a path");
      }
      opts.socket = args[++i];
    } else if (arg.rfind("--socket=", 0) == 0) {
      opts.socket = arg.substr(9);
    } else if (arg == "--interval" || arg.rfind("--interval=", 0) == 0) {
      std::string text;
      if (arg == "--interval") {
        if (i + 1 == args.size()) {
          return usage_error("--interval needs a number of seconds, e.g. --interval 2");
        }
        text = args[++i];
      } else {
        text = arg.substr(11);
      }
      auto d = parse_interval(text);
      if (!d) {
        return d.error();
      }
      opts.interval = *d;
      interval = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usage_error("unknown option \"" + arg + "\"");
    } else {
      positional.push_back(arg);
    }
  }
  if (opts.socket.empty()) {
    return usage_error("--socket needs a path");
  }
  if (opts.socket.size() > limits::max_socket_path_bytes) {
    return usage_error("--socket path \"" + opts.socket.substr(0, 60) + "...\" is "
                       + std::to_string(opts.socket.size()) + " bytes; a unix socket path has at "
                       + "most " + std::to_string(limits::max_socket_path_bytes));
  }
  if (help) {
    opts.cmd = command::help;
    return opts;
  }
  if (version) {
    opts.cmd = command::version;
    return opts;
  }
  if (positional.empty()) {
    return usage_error("missing command");
  }
  const auto& cmd = positional[0];
  if (cmd == "help") {
    opts.cmd = command::help;
  } else if (cmd == "volumes" || cmd == "ls") {
    if (positional.size() > 1) {
      return usage_error("volumes takes no arguments, got \"" + positional[1] + "\"");
    }
    opts.cmd = command::volumes;
  } else if (cmd == "status" || cmd == "top") {
    if (positional.size() > 1) {
      return usage_error(cmd + " takes no arguments, got \"" + positional[1] + "\"");
    }
    opts.cmd = cmd == "status" ? command::status : command::top;
  } else if (cmd == "inspect") {
    if (positional.size() != 2) {
      return usage_error(positional.size() < 2 ? "inspect needs a volume name"
                                                : "inspect takes one volume name");
    }
    opts.cmd = command::inspect;
    opts.name = positional[1];
  } else if (cmd == "resize") {
    if (positional.size() != 3) {
      return usage_error(positional.size() < 3 ? "resize needs a volume name and a size"
                                                : "resize takes a volume name and one size");
    }
    opts.cmd = command::resize;
    opts.name = positional[1];
    auto size = parse_size(positional[2]);
    if (!size) {
      return size.error();
    }
    opts.size_bytes = *size;
  } else if (cmd == "release") {
    if (positional.size() != 3) {
      return usage_error(positional.size() < 3 ? "release needs a volume name and a mount ID "
                                                 "(berthctl inspect NAME lists the IDs)"
                                               : "release takes a volume name and one mount ID");
    }
    opts.cmd = command::release;
    opts.name = positional[1];
    opts.mount_id = positional[2];
  } else if (cmd == "modify") {
    if (positional.size() < 3) {
      return usage_error("modify needs a volume name and at least one key=value");
    }
    opts.cmd = command::modify;
    opts.name = positional[1];
    for (size_t i = 2; i < positional.size(); ++i) {
      const auto& pair = positional[i];
      auto eq = pair.find('=');
      if (eq == std::string::npos) {
        return usage_error("\"" + pair + "\" is not key=value");
      }
      if (eq == 0) {
        return usage_error("\"" + pair + "\" has an empty key: write key=value");
      }
      if (!opts.parameters.emplace(pair.substr(0, eq), pair.substr(eq + 1)).second) {
        return usage_error("key \"" + pair.substr(0, eq) + "\" is given twice");
      }
    }
  } else {
    return usage_error("unknown command \"" + cmd + "\"");
  }
  if (interval && opts.cmd != command::top) {
    return usage_error("--interval is an option of top only");
  }
  return opts;
}

caf::expected<std::chrono::milliseconds> parse_interval(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return usage_error("invalid --interval \"" + std::string{text} + "\": " + why);
  };
  const std::string s{text};
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.';
  });
  char* end = nullptr;
  double secs = plain ? std::strtod(s.c_str(), &end) : 0;
  if (!plain || end != s.c_str() + s.size() || !std::isfinite(secs)) {
    return bad("give seconds, e.g. 1 or 0.5");
  }
  auto min = limits::min_top_interval.count() / 1000.0;
  auto max = limits::max_top_interval.count() / 1000.0;
  if (secs < min || secs > max) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "give between %g and %g seconds", min, max);
    return bad(buf);
  }
  return std::chrono::milliseconds{static_cast<int64_t>(std::llround(secs * 1000))};
}

std::string unreachable_message(const std::string& socket, int connect_errno,
                                const std::string& detail) {
  switch (connect_errno) {
    case ENOENT:
    case ENOTDIR:
      return "berthd is not running: there is no socket at " + socket
             + ". Start it (systemctl start berthd), or give the socket it listens on "
               "(berthd --admin-socket) with --socket PATH.";
    case ECONNREFUSED:
      return "berthd is not running: nothing accepts connections on " + socket
             + " (the socket of a berthd that stopped?). Start it (systemctl start berthd), "
               "or give the socket it listens on (berthd --admin-socket) with --socket PATH.";
    case EACCES:
    case EPERM:
      return "permission denied on " + socket
             + ": berthd's admin socket is for root and its group (mode 0660). Run berthctl "
               "as root (sudo berthctl ...), or give a socket you may use with --socket PATH.";
    default: return "cannot reach berthd at " + detail;
  }
}

caf::expected<uint64_t> parse_size(std::string_view text) {
  auto bad = [&] {
    return usage_error("invalid size \"" + std::string{text}
                       + "\": give bytes, or a number with K, M, G or T (Ki, Mi, Gi, Ti: "
                         "powers of 1024), e.g. 10G");
  };
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    ++digits;
  }
  if (digits == 0) {
    return bad();
  }
  auto suffix = text.substr(digits);
  if (suffix.size() == 2 && suffix[1] == 'i') {
    suffix.remove_suffix(1);
  }
  unsigned shift = 0;
  if (suffix == "K") {
    shift = 10;
  } else if (suffix == "M") {
    shift = 20;
  } else if (suffix == "G") {
    shift = 30;
  } else if (suffix == "T") {
    shift = 40;
  } else if (!suffix.empty()) {
    return bad();
  }
  constexpr uint64_t max = UINT64_MAX;
  uint64_t n = 0;
  for (size_t i = 0; i < digits; ++i) {
    auto d = static_cast<uint64_t>(text[i] - '0');
    if (n > (max - d) / 10) {
      return usage_error("size \"" + std::string{text} + "\" is too large: at most "
                         + std::to_string(max) + " bytes");
    }
    n = n * 10 + d;
  }
  if (n > (max >> shift)) {
    return usage_error("size \"" + std::string{text} + "\" is too large: at most "
                       + std::to_string(max) + " bytes");
  }
  if (n == 0) {
    return usage_error("size \"" + std::string{text} + "\" must be positive");
  }
  return n << shift;
}

std::string format_size(uint64_t bytes) {
  if (bytes == 0) {
    return "-";
  }
  static constexpr const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  size_t unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024.0 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) {
    return std::to_string(bytes) + " bytes";
  }
  char buf[32];
  if (bytes % (uint64_t{1} << (10 * unit)) == 0) {
    std::snprintf(buf, sizeof(buf), "%.0f", value);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f", value);
  }
  return std::string{buf} + " " + units[unit] + " (" + std::to_string(bytes) + " bytes)";
}

std::string usage() {
  return std::string{
           "usage: berthctl [--socket PATH] volumes [--json]\n"
           "       berthctl [--socket PATH] inspect NAME [--json]\n"
           "       berthctl [--socket PATH] resize NAME SIZE [--json]\n"
           "       berthctl [--socket PATH] modify NAME KEY=VALUE... [--json]\n"
           "       berthctl [--socket PATH] release NAME MOUNT_ID [--json]\n"
           "       berthctl [--socket PATH] status [--json]\n"
           "       berthctl [--socket PATH] top [--interval SECONDS] [--json]\n"
           "       berthctl --help | --version [--json]\n"
           "\n"
           "Inspects and operates a running berthd through its admin socket.\n"
           "  volumes       list every record: name, owner (docker or csi), kind, backend,\n"
           "                mounted, mount IDs, path\n"
           "  inspect NAME  show one volume, with its size, mutable parameters and\n"
           "                modifications (backend modifications applied), and per mount\n"
           "                ID its count, the dockerd that made it, when it was last mounted\n"
           "  resize NAME SIZE\n"
           "                grow a volume to at least SIZE: bytes, or a number with K, M,\n"
           "                G or T (also Ki, Mi, Gi, Ti; powers of 1024), e.g. 10G\n"
           "  modify NAME KEY=VALUE...\n"
           "                set mutable parameters (e.g. readAheadKB=256)\n"
           "                resize and modify go through the volume's coalescing window,\n"
           "                like CSI's ControllerExpandVolume and ControllerModifyVolume,\n"
           "                and print the size, parameters and modifications after it\n"
           "  release NAME MOUNT_ID\n"
           "                drop every count of one Docker mount ID that dockerd will never\n"
           "                Unmount (berthctl inspect NAME lists the IDs); refused while the\n"
           "                Docker API reports its container running\n"
           "  status        version, uptime, whether berthd is ready (and why not), volume\n"
           "                and mount counts, journal size, the last fsync's latency\n"
           "  top           a live view of operations per second and p50/p99 latency per\n"
           "                operation, sorted by rate; q quits. --interval SECONDS between\n"
           "                refreshes (default 1; 0.1 to 3600). With --json: the view of\n"
           "                one interval, then exit (no terminal needed)\n"
           "  --json        print the JSON that berthd returns\n"
           "  --socket PATH the admin socket (default "} +
         default_socket + ")\n";
}

std::string short_id(std::string_view id) {
  return std::string{id.substr(0, 12)};
}

std::string format_table(const std::vector<volume_record>& recs) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"NAME", "OWNER", "KIND", "BACKEND", "MOUNTED", "MOUNT IDS", "PATH"});
  for (const auto& rec : recs) {
    rows.push_back({rec.name, owner_of(rec), to_string(rec.kind), rec.backend,
                    rec.mounted ? "yes" : "no", mount_ids(rec, true), path_of(rec)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) {
        out.append(width[i] - row[i].size() + 3, ' ');
      }
    }
    out += '\n';
  }
  return out;
}

std::string format_record(const volume_record& rec) {
  auto size = format_size(rec.capacity_bytes);
  std::string out;
  out += "name:          " + rec.name + "\n";
  out += "owner:         " + owner_of(rec) + " (the protocol that may use it)\n";
  out += "kind:          " + to_string(rec.kind) + "\n";
  out += "backend:       " + rec.backend + "\n";
  out += "created at:    " + (rec.created_at.empty() ? "-" : rec.created_at) + "\n";
  out += "options:       " + pairs(rec.options) + "\n";
  out += "size:          " + (size == "-" ? std::string{"- (no size of its own)"} : size) + "\n";
  out += "mutable:       " + pairs(rec.mutable_parameters) + "\n";
  out += "modifications: " + std::to_string(rec.modifications) + "\n";
  out += std::string{"mounted:       "} + (rec.mounted ? "yes" : "no") + "\n";
  out += "mountpoint:    " + path_of(rec) + "\n";
  out += "mounts:        " + std::to_string(total_mounts(rec)) + "\n";
  out += format_mount_ids(rec);
  return out;
}

std::string format_change(const volume_record& rec, command cmd) {
  return "volume " + rec.name + (cmd == command::resize ? " resized" : " modified") + ": size "
         + format_size(rec.capacity_bytes) + "; mutable parameters "
         + pairs(rec.mutable_parameters) + "; modifications "
         + std::to_string(rec.modifications) + "\n";
}

caf::expected<std::string> format_release(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("volume")
      || !doc["volume"].IsString() || !doc.HasMember("id") || !doc["id"].IsString()
      || !doc.HasMember("dropped") || !doc["dropped"].IsUint()) {
    return make_error(ec::internal, "an unreadable answer to release: " + body.substr(0, 200));
  }
  std::string id = doc["id"].GetString();
  auto shown = id.size() > 12 ? short_id(id) + "…" : id;
  std::string out = "released mount ID " + shown + " of volume " + doc["volume"].GetString()
                    + " (count " + std::to_string(doc["dropped"].GetUint()) + " dropped)\n";
  auto checked = doc.FindMember("checked");
  if (checked != doc.MemberEnd() && checked->value.IsBool() && !checked->value.GetBool()) {
    auto why = doc.FindMember("unchecked_why");
    out += std::string{"(not checked against dockerd: "}
           + (why != doc.MemberEnd() && why->value.IsString() ? why->value.GetString()
                                                              : "berthd did not say why")
           + ")\n";
  }
  return out;
}

caf::expected<std::string> admin_request(unix_http_client& client, const std::string& socket,
                                         const std::string& target,
                                         const std::string* post_body) {
  auto res = post_body != nullptr ? client.post(target, *post_body, "application/json")
                                  : client.get(target);
  if (!res) {
    return make_error(ec::unavailable, unreachable_message(socket, client.connect_errno(),
                                                           describe(res.error())));
  }
  if (res->status != 200) {
    return make_error(http_error_code(res->status), error_of(*res));
  }
  return std::move(res->body);
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto opts = parse_args(args);
  if (!opts) {
    err << "berthctl: " << describe(opts.error()) << "\n" << usage();
    return exit_usage;
  }
  if (opts->cmd == command::help) {
    out << usage();
    return exit_ok;
  }
  if (opts->cmd == command::version) {
    if (opts->json) {
      out << R"({"berthctl":")" << BERTH_VERSION << "\"}\n";
    } else {
      out << "berthctl " << BERTH_VERSION << "\n";
    }
    return exit_ok;
  }
  if (opts->cmd == command::top) {
    return run_top(*opts, out, err);
  }
  unix_http_client client{opts->socket};
  if (opts->cmd == command::status) {
    auto body = admin_request(client, opts->socket, "/v1/status");
    if (!body) {
      err << "berthctl: " << describe(body.error()) << "\n";
      return exit_failure;
    }
    if (opts->json) {
      out << *body << "\n";
      return exit_ok;
    }
    auto status = parse_status(*body);
    if (!status) {
      err << "berthctl: berthd sent " << describe(status.error()) << "\n";
      return exit_failure;
    }
    out << format_status(*status);
    return exit_ok;
  }
  bool release = opts->cmd == command::release;
  bool change = opts->cmd == command::resize || opts->cmd == command::modify;
  std::string target = "/v1/volumes";
  if (opts->cmd != command::volumes) {
    target += "/" + opts->name;
  }
  if (change) {
    target += opts->cmd == command::resize ? "/resize" : "/modify";
  } else if (release) {
    target += "/release";
  }
  change = change || release;
  auto post = change_body(*opts);
  auto body = admin_request(client, opts->socket, target, change ? &post : nullptr);
  if (!body) {
    err << "berthctl: " << describe(body.error()) << "\n";
    return exit_failure;
  }
  if (opts->json) {
    out << *body << "\n";
    return exit_ok;
  }
  if (release) {
    auto text = format_release(*body);
    if (!text) {
      err << "berthctl: berthd sent " << describe(text.error()) << "\n";
      return exit_failure;
    }
    out << *text;
    return exit_ok;
  }
  if (opts->cmd == command::volumes) {
    auto recs = records_from_json(*body);
    if (!recs) {
      err << "berthctl: berthd sent " << describe(recs.error()) << "\n";
      return exit_failure;
    }
    out << format_table(*recs);
    return exit_ok;
  }
  auto rec = record_from_json(*body);
  if (!rec) {
    err << "berthctl: berthd sent an unreadable record: " << describe(rec.error()) << "\n";
    return exit_failure;
  }
  out << (change ? format_change(*rec, opts->cmd) : format_record(*rec));
  return exit_ok;
}

} // namespace berth::cli
