#include "apps/berthctl/berthctl_cli.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <ostream>
#include <sstream>
#include <utility>

#include <CLI/CLI.hpp>

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

namespace {

/// A usage error whose message is the whole of what berthctl prints (no "--flag: ").
struct usage_failure : CLI::ParseError {
  explicit usage_failure(const std::string& msg)
    : CLI::ParseError("usage", msg, CLI::ExitCodes::ValidationError) {}
};

/// The arguments of a command (NAME, SIZE, ...): `text` is how --help names them.
constexpr const char* args_option = "args";

/// --help: the usage lines, one per command, then the commands and the options, all
/// read from the app that parses.
class berthctl_formatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
    std::ostringstream out;
    std::string lead = "usage: ";
    for (const auto* sub : commands(app)) {
      out << lead << "berthctl [--socket PATH] " << sub->get_name() << args_of(sub)
          << (sub->get_name() == "top" ? " [--interval SECONDS]" : "") << " [--json]\n";
      lead = "       ";
    }
    out << lead << "berthctl --help | --version [--json]\n\n" << app->get_description() << "\n";
    for (const auto* sub : commands(app)) {
      CLI::detail::format_help(out, sub->get_name() + args_of(sub), sub->get_description(),
                               column_width_);
    }
    for (const auto* opt : app->get_options()) {
      CLI::detail::format_help(out, opt->get_name(false, true) + make_option_opts(opt),
                               opt->get_description(), column_width_);
    }
    return out.str();
  }

 private:
  static std::vector<const CLI::App*> commands(const CLI::App* app) {
    return app->get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
  }
  static std::string args_of(const CLI::App* sub) {
    const auto* opt = sub->get_option_no_throw(args_option);
    return opt == nullptr || opt->get_option_text().empty() ? "" : " " + opt->get_option_text();
  }
};

/// The one table of berthctl's commands and options: it parses the command line and
/// writes --help. `opts` receives the options, `positional` a command's arguments.
void describe_options(CLI::App& app, options& opts, std::vector<std::string>& positional,
                      bool& help, bool& version) {
  app.set_help_flag();
  app.formatter(std::make_shared<berthctl_formatter>());
  app.get_formatter()->column_width(16);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.option_defaults()->disable_flag_override(); // --json=yes is no --json
  app.require_subcommand(0, 1);
  app.fallthrough();
  app.allow_extras(); // parse_args names what is left over, as berthctl always did
  struct spec {
    const char* name;
    const char* alias;
    command cmd;
    const char* args; ///< how --help names the arguments ("" = none)
    const char* help;
  };
  for (const auto& c : std::vector<spec>{
         {"volumes", "ls", command::volumes, "",
          "list every record: name, owner (docker or csi), kind, backend,\n"
          "mounted, mount IDs, path"},
         {"inspect", nullptr, command::inspect, "NAME",
          "show one volume, with its size, mutable parameters and\n"
          "modifications (backend modifications applied), and per mount\n"
          "ID its count, the dockerd that made it, when it was last mounted"},
         {"resize", nullptr, command::resize, "NAME SIZE",
          "grow a volume to at least SIZE: bytes, or a number with K, M,\n"
          "G or T (also Ki, Mi, Gi, Ti; powers of 1024), e.g. 10G"},
         {"modify", nullptr, command::modify, "NAME KEY=VALUE...",
          "set mutable parameters (e.g. readAheadKB=256)\n"
          "resize and modify go through the volume's coalescing window,\n"
          "like CSI's ControllerExpandVolume and ControllerModifyVolume,\n"
          "and print the size, parameters and modifications after it"},
         {"release", nullptr, command::release, "NAME MOUNT_ID",
          "drop every count of one Docker mount ID that dockerd will never\n"
          "Unmount (berthctl inspect NAME lists the IDs); refused while the\n"
          "Docker API reports its container running"},
         {"status", nullptr, command::status, "",
          "version, uptime, whether berthd is ready (and why not), volume\n"
          "and mount counts, journal size, the last fsync's latency"},
         {"top", nullptr, command::top, "",
          "a live view of operations per second and p50/p99 latency per\n"
          "operation, sorted by rate; q quits. --interval SECONDS between\n"
          "refreshes (default 1; 0.1 to 3600). With --json: the view of\n"
          "one interval, then exit (no terminal needed)"},
         {"help", nullptr, command::help, "", ""}}) {
    auto* sub = app.add_subcommand(c.name, c.help);
    if (c.alias != nullptr) {
      sub->alias(c.alias);
    }
    if (c.cmd == command::help) {
      sub->group(""); // the same as --help
    }
    sub->add_option(args_option, positional)
      ->option_text(c.args)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    sub->callback([&opts, cmd = c.cmd] { opts.cmd = cmd; });
  }
  app.add_flag("--json", opts.json, "print the JSON that berthd returns");
  app.add_option_function<std::string>(
       "--socket",
       [&opts](const std::string& v) {
         if (v.empty()) {
           throw usage_failure("--socket needs a path");
         }
         if (v.size() > limits::max_socket_path_bytes) {
           throw usage_failure("--socket path \"" + v.substr(0, 60) + "...\" is "
                               + std::to_string(v.size()) + " bytes; a unix socket path has at "
                               + "most " + std::to_string(limits::max_socket_path_bytes));
         }
         opts.socket = v;
       },
       std::string{"the admin socket (default "} + default_socket + ")")
    ->option_text("PATH");
  app.add_option_function<std::string>(
       "--interval",
       [&opts](const std::string& v) {
         auto d = parse_interval(v);
         if (!d) {
           throw usage_failure(describe(d.error()));
         }
         opts.interval = *d;
       },
       "top's time between two refreshes (default 1; 0.1 to 3600)")
    ->option_text("SECONDS");
  app.add_flag("--help,-h", help, "this text");
  app.add_flag("--version", version, "berthctl's version");
}

/// The app describe_options fills.
struct berthctl_app {
  CLI::App app{"Inspects and operates a running berthd through its admin socket.", "berthctl"};
  std::vector<std::string> positional;
  bool help = false;
  bool version = false;
  explicit berthctl_app(options& opts) { describe_options(app, opts, positional, help, version); }
};

/// The arguments as CLI11 should see them, last first (the order its parse takes). CLI11
/// reads `--socket=` as a flag without its value and takes the next argument instead;
/// here it is `--socket ""`, an empty value, which --socket refuses by name.
std::vector<std::string> for_cli11(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    if (it->size() > 3 && it->rfind("--", 0) == 0 && it->back() == '=') {
      out.emplace_back();
      out.push_back(it->substr(0, it->size() - 1));
    } else {
      out.push_back(*it);
    }
  }
  return out;
}

/// What a flag that lacks its value, or a switch given one, is told.
std::string missing_value(const std::string& what) {
  if (auto at = what.find(" was given a disallowed flag override"); at != std::string::npos) {
    return "--" + what.substr(0, at) + " takes no value";
  }
  for (const auto& [flag, msg] :
       {std::pair<std::string, std::string>{"--socket", "--socket needs a path"},
        {"--interval", "--interval needs a number of seconds, e.g. --interval 2"}}) {
    if (what.rfind(flag + ":", 0) == 0) {
      return msg;
    }
  }
  return what;
}

} // namespace

caf::expected<options> parse_args(const std::vector<std::string>& args) {
  options opts;
  berthctl_app b{opts};
  try {
    b.app.parse(for_cli11(args));
  } catch (const usage_failure& e) {
    return usage_error(e.what());
  } catch (const CLI::ParseError& e) {
    return usage_error(missing_value(e.what()));
  }
  if (auto extra = b.app.remaining(true); !extra.empty()) {
    if (extra[0].size() > 1 && extra[0][0] == '-') {
      return usage_error("unknown option \"" + extra[0] + "\"");
    }
    return usage_error("unknown command \"" + extra[0] + "\"");
  }
  if (b.help) {
    opts.cmd = command::help;
    return opts;
  }
  if (b.version) {
    opts.cmd = command::version;
    return opts;
  }
  if (b.app.get_subcommands().empty()) {
    return usage_error("missing command");
  }
  const auto& rest = b.positional;
  const auto cmd = b.app.get_subcommands().front()->get_name();
  switch (opts.cmd) {
    case command::help:
    case command::version:
      break;
    case command::volumes:
    case command::status:
    case command::top:
      if (!rest.empty()) {
        return usage_error(cmd + " takes no arguments, got \"" + rest[0] + "\"");
      }
      break;
    case command::inspect:
      if (rest.size() != 1) {
        return usage_error(rest.empty() ? "inspect needs a volume name"
                                        : "inspect takes one volume name");
      }
      opts.name = rest[0];
      break;
    case command::resize: {
      if (rest.size() != 2) {
        return usage_error(rest.size() < 2 ? "resize needs a volume name and a size"
                                           : "resize takes a volume name and one size");
      }
      opts.name = rest[0];
      auto size = parse_size(rest[1]);
      if (!size) {
        return size.error();
      }
      opts.size_bytes = *size;
      break;
    }
    case command::release:
      if (rest.size() != 2) {
        return usage_error(rest.size() < 2 ? "release needs a volume name and a mount ID "
                                             "(berthctl inspect NAME lists the IDs)"
                                           : "release takes a volume name and one mount ID");
      }
      opts.name = rest[0];
      opts.mount_id = rest[1];
      break;
    case command::modify:
      if (rest.size() < 2) {
        return usage_error("modify needs a volume name and at least one key=value");
      }
      opts.name = rest[0];
      for (size_t i = 1; i < rest.size(); ++i) {
        const auto& pair = rest[i];
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
      break;
  }
  if (b.app.get_option("--interval")->count() > 0 && opts.cmd != command::top) {
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
  options opts;
  berthctl_app b{opts};
  return b.app.help();
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
