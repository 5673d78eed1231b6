#include "apps/berthctl/berthctl_cli.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <memory>
#include <ostream>
#include <sstream>
#include <utility>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "apps/berthctl/berthctl_inspect.hpp"
#include "apps/berthctl/berthctl_status.hpp"
#include "apps/berthctl/berthctl_top.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/record_json.hpp"
#include "core/text.hpp"
#include "protocols/http/unix_http_client.hpp"

namespace berth::cli {

namespace {

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

/// The terminal columns `cell` takes: one per UTF-8 character, so that a short ID's "…"
/// (three bytes) or a path in another script keeps the table's columns aligned.
size_t columns(const std::string& cell) {
  return static_cast<size_t>(std::count_if(cell.begin(), cell.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xc0) != 0x80; // not a continuation byte
  }));
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

/// The admin API body of a resize, modify, release or snapshot create.
std::string change_body(const options& opts) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  w.StartObject();
  if (opts.cmd == command::snapshot_create) {
    w.Key("name");
    w.String(opts.snapshot.c_str(), static_cast<rapidjson::SizeType>(opts.snapshot.size()));
  } else if (opts.cmd == command::release) {
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

/// `bytes` in the largest power of 1024 that leaves at least 1: the value and the
/// power (0: bytes, 1: KiB, ... 6: EiB).
std::pair<double, size_t> scaled(uint64_t bytes) {
  size_t unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024.0 && unit < 6) {
    value /= 1024.0;
    ++unit;
  }
  return {value, unit};
}

} // namespace

std::string format_size(uint64_t bytes) {
  if (bytes == 0) {
    return "-";
  }
  static constexpr const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  auto [value, unit] = scaled(bytes);
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

namespace {

/// A size for a table cell: "64M", "1.5G", "-" for none.
std::string short_size(uint64_t bytes) {
  if (bytes == 0) {
    return "-";
  }
  static constexpr const char* units[] = {"", "K", "M", "G", "T", "P", "E"};
  auto [value, unit] = scaled(bytes);
  char buf[32];
  std::snprintf(buf, sizeof(buf), value >= 10 || unit == 0 ? "%.0f%s" : "%.1f%s", value,
                units[unit]);
  return buf;
}

/// Rows of cells as aligned columns, the first row the heading.
std::string aligned(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      width[i] = std::max(width[i], columns(row[i]));
    }
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) {
        out.append(width[i] - columns(row[i]) + 3, ' ');
      }
    }
    out += '\n';
  }
  return out;
}

} // namespace

used_bytes_map used_bytes_of(const std::string& body) {
  used_bytes_map out;
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  if (doc.HasParseError()) {
    return out;
  }
  auto take = [&out](const rapidjson::Value& rec) {
    if (!rec.IsObject()) {
      return;
    }
    auto name = rec.FindMember("name");
    auto used = rec.FindMember("used_bytes");
    if (name != rec.MemberEnd() && name->value.IsString() && used != rec.MemberEnd()
        && used->value.IsUint64()) {
      out[name->value.GetString()] = used->value.GetUint64();
    }
  };
  if (doc.IsArray()) {
    for (const auto& rec : doc.GetArray()) {
      take(rec);
    }
  } else {
    take(doc);
  }
  return out;
}

std::string format_table(const std::vector<volume_record>& recs, const used_bytes_map& used) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back(
    {"NAME", "OWNER", "KIND", "BACKEND", "SIZE", "USED", "MOUNTED", "MOUNT IDS", "PATH"});
  for (const auto& rec : recs) {
    auto u = used.find(rec.name);
    rows.push_back({rec.name, owner_of(rec), to_string(rec.kind), rec.backend,
                    short_size(rec.capacity_bytes), u == used.end() ? "-" : short_size(u->second),
                    rec.mounted ? "yes" : "no", mount_ids(rec, true), path_of(rec)});
  }
  return aligned(rows);
}

std::string format_snapshots(const std::vector<volume_record>& snapshots,
                             const std::string& volume) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"NAME", "VOLUME", "BACKEND", "SIZE", "CREATED"});
  for (const auto& rec : snapshots) {
    if (!volume.empty() && rec.source.name != volume) {
      continue;
    }
    rows.push_back({rec.name, rec.source.name, rec.backend, short_size(rec.capacity_bytes),
                    rec.created_at.empty() ? "-" : rec.created_at});
  }
  return aligned(rows);
}

std::string format_record(const volume_record& rec, const used_bytes_map& used) {
  auto size = format_size(rec.capacity_bytes);
  auto u = used.find(rec.name);
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
  out += "used:          "
         + (u == used.end() ? std::string{"- (measured while a block volume is mounted)"}
                            : format_size(u->second))
         + "\n";
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
  std::string out = "released mount ID " + short_id(doc["id"].GetString()) + " of volume "
                    + doc["volume"].GetString() + " (count "
                    + std::to_string(doc["dropped"].GetUint()) + " dropped)\n";
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
                                         const std::string* post_body, bool remove) {
  auto res = remove                ? client.remove(target)
             : post_body != nullptr ? client.post(target, *post_body, "application/json")
                                    : client.get(target);
  if (!res) {
    // The client's own messages name the socket and how long it waited.
    if (is(res.error(), ec::timeout)) {
      return make_error(client_ec::no_answer, describe(res.error()));
    }
    if (is(res.error(), ec::aborted)) {
      return make_error(client_ec::interrupted, describe(res.error()));
    }
    return make_error(client_ec::unreachable,
                      unreachable_message(socket, client.connect_errno(),
                                          describe(res.error())));
  }
  if (res->status != 200) {
    return make_error(http_error_code(res->status), error_of(*res));
  }
  return std::move(res->body);
}

namespace {

/// The admin API's route of a command other than help, version and top.
std::string target_of(const options& opts) {
  switch (opts.cmd) {
    case command::status: return "/v1/status";
    case command::volumes: return "/v1/volumes";
    case command::resize: return "/v1/volumes/" + opts.name + "/resize";
    case command::modify: return "/v1/volumes/" + opts.name + "/modify";
    case command::release: return "/v1/volumes/" + opts.name + "/release";
    case command::snapshot_create: return "/v1/volumes/" + opts.name + "/snapshot";
    case command::snapshot_list: return "/v1/snapshots";
    case command::snapshot_remove: return "/v1/snapshots/" + opts.name;
    default: return "/v1/volumes/" + opts.name; // inspect
  }
}

/// The text a command prints for berthd's answer `body`.
caf::expected<std::string> text_of(const options& opts, const std::string& body) {
  switch (opts.cmd) {
    case command::status: {
      auto status = parse_status(body);
      if (!status) {
        return unreadable_answer(status.error());
      }
      return format_status(*status);
    }
    case command::release: {
      auto text = format_release(body);
      return text ? text : unreadable_answer(text.error());
    }
    case command::volumes: {
      auto recs = records_from_json(body);
      if (!recs) {
        return unreadable_answer(recs.error());
      }
      return format_table(*recs, used_bytes_of(body));
    }
    case command::snapshot_list: {
      auto recs = records_from_json(body);
      if (!recs) {
        return unreadable_answer(recs.error());
      }
      return format_snapshots(*recs, opts.name);
    }
    case command::snapshot_remove:
      return "snapshot " + opts.name + " removed\n";
    case command::snapshot_create: {
      auto rec = record_from_json(body);
      if (!rec) {
        return unreadable_answer(rec.error());
      }
      return "snapshot " + rec->name + " of volume " + rec->source.name + " taken ("
             + format_size(rec->capacity_bytes) + ")\n";
    }
    default: {
      auto rec = record_from_json(body);
      if (!rec) {
        return make_error(client_ec::bad_answer,
                          "berthd sent an unreadable record: " + describe(rec.error()));
      }
      bool change = opts.cmd == command::resize || opts.cmd == command::modify;
      return change ? format_change(*rec, opts.cmd) : format_record(*rec, used_bytes_of(body));
    }
  }
}

/// What a command other than help, version and top prints on success: berthd's JSON with
/// --json, else its text.
caf::expected<std::string> answer_of(const options& opts) {
  unix_http_client client{opts.socket};
  client.set_timeout(opts.timeout);
  bool post = opts.cmd == command::resize || opts.cmd == command::modify
              || opts.cmd == command::release || opts.cmd == command::snapshot_create;
  auto sent = change_body(opts);
  auto body = admin_request(client, opts.socket, target_of(opts), post ? &sent : nullptr,
                            opts.cmd == command::snapshot_remove);
  if (!body) {
    return body.error();
  }
  if (opts.json) {
    return *body + "\n";
  }
  return text_of(opts, *body);
}

} // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto opts = parse_args(args);
  if (!opts) {
    // The command line did not parse, so --json is looked for by itself: a script that
    // asked for JSON gets its error as JSON too.
    bool json = std::find(args.begin(), args.end(), "--json") != args.end();
    report_failure(err, opts.error(), json);
    if (!json) {
      err << usage();
    }
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
  auto text = answer_of(*opts);
  if (!text) {
    report_failure(err, text.error(), opts->json);
    return exit_failure;
  }
  out << *text;
  return exit_ok;
}

} // namespace berth::cli
