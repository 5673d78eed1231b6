#include "protocols/admin/berthctl_cli.hpp"

#include <algorithm>
#include <ostream>

#include <rapidjson/document.h>

#include "core/errors.hpp"
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

caf::expected<std::vector<volume_record>> parse_list(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  if (doc.HasParseError() || !doc.IsArray()) {
    return make_error(ec::internal, "berthd sent a volume list that is not a JSON array");
  }
  std::vector<volume_record> out;
  for (const auto& v : doc.GetArray()) {
    auto rec = read_record(v);
    if (!rec) {
      return rec.error();
    }
    out.push_back(std::move(*rec));
  }
  return out;
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

} // namespace

caf::expected<options> parse_args(const std::vector<std::string>& args) {
  options opts;
  std::vector<std::string> positional;
  bool help = false;
  bool version = false;
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
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usage_error("unknown option \"" + arg + "\"");
    } else {
      positional.push_back(arg);
    }
  }
  if (opts.socket.empty()) {
    return usage_error("--socket needs a path");
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
  } else if (cmd == "inspect") {
    if (positional.size() != 2) {
      return usage_error(positional.size() < 2 ? "inspect needs a volume name"
                                                : "inspect takes one volume name");
    }
    opts.cmd = command::inspect;
    opts.name = positional[1];
  } else {
    return usage_error("unknown command \"" + cmd + "\"");
  }
  return opts;
}

std::string usage() {
  return std::string{"usage: berthctl [--socket PATH] volumes [--json]\n"
                     "       berthctl [--socket PATH] inspect NAME [--json]\n"
                     "       berthctl --help | --version\n"
                     "\n"
                     "Inspects a running berthd through its admin socket.\n"
                     "  volumes       list every record: name, owner (docker or csi), kind, backend,\n"
                     "                mounted, mount IDs, path\n"
                     "  inspect NAME  show one volume\n"
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
    rows.push_back({rec.name, owner_of(rec), rec.kind, rec.backend, rec.mounted ? "yes" : "no",
                    mount_ids(rec, true), path_of(rec)});
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
  std::string opts;
  for (const auto& [k, v] : rec.options) {
    opts += (opts.empty() ? "" : ", ") + k + "=" + v;
  }
  std::string out;
  out += "name:        " + rec.name + "\n";
  out += "owner:       " + owner_of(rec) + " (the protocol that may use it)\n";
  out += "kind:        " + rec.kind + "\n";
  out += "backend:     " + rec.backend + "\n";
  out += "created at:  " + (rec.created_at.empty() ? "-" : rec.created_at) + "\n";
  out += "options:     " + (opts.empty() ? "-" : opts) + "\n";
  out += std::string{"mounted:     "} + (rec.mounted ? "yes" : "no") + "\n";
  out += "mountpoint:  " + path_of(rec) + "\n";
  out += "mounts:      " + std::to_string(total_mounts(rec)) + "\n";
  for (const auto& [id, count] : rec.mounts) {
    out += "  " + id + ": " + std::to_string(count) + "\n";
  }
  return out;
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
    out << "berthctl " << BERTH_VERSION << "\n";
    return exit_ok;
  }
  unix_http_client client{opts->socket};
  auto target = opts->cmd == command::volumes ? std::string{"/v1/volumes"}
                                              : "/v1/volumes/" + opts->name;
  auto res = client.get(target);
  if (!res) {
    err << "berthctl: cannot reach berthd at " << describe(res.error()) << "\n";
    return exit_failure;
  }
  if (res->status != 200) {
    err << "berthctl: " << error_of(*res) << "\n";
    return exit_failure;
  }
  if (opts->json) {
    out << res->body << "\n";
    return exit_ok;
  }
  if (opts->cmd == command::volumes) {
    auto recs = parse_list(res->body);
    if (!recs) {
      err << "berthctl: " << describe(recs.error()) << "\n";
      return exit_failure;
    }
    out << format_table(*recs);
    return exit_ok;
  }
  auto rec = record_from_json(res->body);
  if (!rec) {
    err << "berthctl: berthd sent an unreadable record: " << describe(rec.error()) << "\n";
    return exit_failure;
  }
  out << format_record(*rec);
  return exit_ok;
}

} // namespace berth::cli
