// What berthctl prints of volumes and snapshots: sizes, the volume and snapshot tables with
// their figures and health, a snapshot diff, an applied delta, one record and a change
// (declared in berthctl_cli.hpp). The answers to release and unclaimed:
// berthctl_format_answers.cpp.

#include "apps/berthctl/berthctl_cli.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <utility>

#include <rapidjson/document.h>

#include "apps/berthctl/berthctl_inspect.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"

namespace berth::cli {

namespace {

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

/// A copy's consistency as berthctl prints it: "consistent", or what the record says.
std::string consistency_of(const volume_record& rec) {
  return rec.consistency.empty() ? "consistent" : rec.consistency;
}

/// Whether a block volume's loop device uses direct I/O, and what that means.
std::string direct_io_line(const volume_record& rec, std::optional<bool> on) {
  if (!on) {
    return "- (read while a block volume is mounted)";
  }
  if (*on) {
    return "on (its pages are cached once, in its own filesystem)";
  }
  auto opt = rec.mutable_parameters.find("directIO");
  if (opt != rec.mutable_parameters.end() && opt->second == "false") {
    return "off, as its directIO=false asks (its pages are cached twice)";
  }
  return "off: the host refused it (berthd's log says why); its pages are cached twice";
}

/// "ok", the reasons of an abnormal volume ("mount_gone,image_short"), or "-" unsaid.
std::string health_word(const volume_figures& f) {
  if (!f.healthy) {
    return "-";
  }
  if (*f.healthy) {
    return "ok";
  }
  std::string out;
  for (const auto& [reason, message] : f.conditions) {
    if (!out.empty()) {
      out += ',';
    }
    out += reason;
  }
  return out.empty() ? "abnormal" : out;
}

/// inspect's health lines: healthy, or abnormal and each condition's reason and message.
std::string health_lines(const volume_figures& f) {
  if (!f.healthy) {
    return "health:        - (berthd did not say)\n";
  }
  if (*f.healthy) {
    return "health:        healthy\n";
  }
  std::string out = "health:        abnormal\n";
  for (const auto& [reason, message] : f.conditions) {
    out += "  ";
    out += reason;
    out += ": ";
    out += message;
    out += '\n';
  }
  return out;
}

} // namespace

figures_map figures_of(const std::string& body) {
  figures_map out;
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
    if (name == rec.MemberEnd() || !name->value.IsString()) {
      return;
    }
    volume_figures f;
    if (auto used = rec.FindMember("used_bytes");
        used != rec.MemberEnd() && used->value.IsUint64()) {
      f.used = used->value.GetUint64();
    }
    if (auto a = rec.FindMember("allocated_bytes"); a != rec.MemberEnd() && a->value.IsUint64()) {
      f.allocated = a->value.GetUint64();
    }
    if (auto d = rec.FindMember("direct_io"); d != rec.MemberEnd() && d->value.IsBool()) {
      f.direct_io = d->value.GetBool();
    }
    if (auto h = rec.FindMember("health"); h != rec.MemberEnd() && h->value.IsString()) {
      f.healthy = std::string{h->value.GetString()} == "healthy";
    }
    if (auto c = rec.FindMember("conditions"); c != rec.MemberEnd() && c->value.IsArray()) {
      for (const auto& one : c->value.GetArray()) {
        if (one.IsObject() && one.HasMember("reason") && one["reason"].IsString()
            && one.HasMember("message") && one["message"].IsString()) {
          f.conditions.emplace_back(one["reason"].GetString(), one["message"].GetString());
        }
      }
    }
    if (f.used || f.allocated || f.direct_io || f.healthy) {
      out[name->value.GetString()] = f;
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

std::string format_table(const std::vector<volume_record>& recs, const figures_map& figures) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"NAME", "OWNER", "KIND", "BACKEND", "SIZE", "USED", "ALLOCATED", "MOUNTED",
                  "HEALTH", "MOUNT IDS", "PATH"});
  for (const auto& rec : recs) {
    auto f = figures.find(rec.name);
    auto shown = [&](const std::optional<uint64_t> volume_figures::*which) {
      return f == figures.end() || !(f->second.*which) ? std::string{"-"}
                                                        : short_size(*(f->second.*which));
    };
    rows.push_back({rec.name, to_string(owner_of(rec)), to_string(rec.kind), rec.backend,
                    short_size(rec.capacity_bytes), shown(&volume_figures::used),
                    shown(&volume_figures::allocated), rec.mounted ? "yes" : "no",
                    f == figures.end() ? "-" : health_word(f->second), mount_ids(rec, true),
                    path_of(rec)});
  }
  return aligned(rows);
}

std::string format_snapshots(const std::vector<volume_record>& snapshots,
                             const std::string& volume) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"NAME", "VOLUME", "BACKEND", "SIZE", "CONSISTENCY", "CREATED"});
  for (const auto& rec : snapshots) {
    if (!volume.empty() && rec.source.name != volume) {
      continue;
    }
    rows.push_back({rec.name, rec.source.name, rec.backend, short_size(rec.capacity_bytes),
                    consistency_of(rec), rec.created_at.empty() ? "-" : rec.created_at});
  }
  return aligned(rows);
}

caf::expected<std::string> format_delta_applied(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  auto text = [&doc](const char* key) {
    return doc.IsObject() && doc.HasMember(key) && doc[key].IsString()
      ? std::string{doc[key].GetString()}
      : std::string{};
  };
  auto number = [&doc](const char* key) -> uint64_t {
    return doc.HasMember(key) && doc[key].IsUint64() ? doc[key].GetUint64() : 0;
  };
  if (doc.HasParseError() || text("volume").empty() || text("base").empty()) {
    return make_error(ec::invalid_argument, "no applied delta: " + quote_input(body));
  }
  const auto ranges = number("ranges");
  return "volume " + text("volume") + " now holds volume " + text("delta_of")
    + " as it was exported since snapshot " + text("base") + ": " + std::to_string(ranges)
    + " range" + (ranges == 1 ? "" : "s") + ", " + format_size(number("changed_bytes"))
    + " written\n";
}

caf::expected<std::string> format_diff(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("ranges")
      || !doc["ranges"].IsArray()) {
    return make_error(ec::invalid_argument, "no snapshot diff: " + quote_input(body));
  }
  auto number = [&doc](const char* key) -> uint64_t {
    return doc.HasMember(key) && doc[key].IsUint64() ? doc[key].GetUint64() : 0;
  };
  auto text = [&doc](const char* key) {
    return doc.HasMember(key) && doc[key].IsString() ? std::string{doc[key].GetString()} : "-";
  };
  const auto& ranges = doc["ranges"].GetArray();
  const auto volume = " (volume " + text("volume") + ", " + format_size(number("size_bytes")) + ")";
  std::string out = ranges.Empty()
    ? "snapshot " + text("target") + " holds the same bytes as " + text("base") + volume + "\n"
    : "snapshot " + text("target") + " differs from " + text("base") + volume + " in "
      + std::to_string(ranges.Size()) + " range" + (ranges.Size() == 1 ? "" : "s") + ": "
      + format_size(number("changed_bytes")) + ", in blocks of " + short_size(number("block_bytes"))
      + "\n";
  out += "compared " + std::to_string(number("shared_blocks") + number("read_blocks"))
    + " blocks: " + std::to_string(number("shared_blocks")) + " by their shared extents, "
    + std::to_string(number("read_blocks")) + " read\n";
  if (ranges.Empty()) {
    return out;
  }
  std::vector<std::vector<std::string>> rows{{"OFFSET", "LENGTH"}};
  for (const auto& r : ranges) {
    auto field = [&r](const char* key) {
      return r.IsObject() && r.HasMember(key) && r[key].IsUint64()
        ? std::to_string(r[key].GetUint64())
        : std::string{"?"};
    };
    rows.push_back({field("offset"), field("length")});
  }
  return out + aligned(rows);
}

std::string format_record(const volume_record& rec, const figures_map& figures) {
  auto size = format_size(rec.capacity_bytes);
  auto found = figures.find(rec.name);
  auto f = found == figures.end() ? volume_figures{} : found->second;
  std::string out;
  out += "name:          " + rec.name + "\n";
  out += "owner:         " + to_string(owner_of(rec)) + " (the protocol that may use it)\n";
  out += "kind:          " + to_string(rec.kind) + "\n";
  out += "backend:       " + rec.backend + "\n";
  out += "created at:    " + (rec.created_at.empty() ? "-" : rec.created_at) + "\n";
  out += "options:       " + pairs(rec.options) + "\n";
  out += "size:          " + (size == "-" ? std::string{"- (no size of its own)"} : size) + "\n";
  out += "mutable:       " + pairs(rec.mutable_parameters) + "\n";
  out += "modifications: " + std::to_string(rec.modifications) + "\n";
  if (rec.kind == record_kind::snapshot || !rec.source.empty()) {
    out += "copied from:   " + rec.source.describe() + " (" + consistency_of(rec) + ")\n";
  }
  const std::string unmeasured = "- (measured while a block volume is mounted)";
  out += "used:          " + (f.used ? format_size(*f.used) : unmeasured) + "\n";
  if (rec.backend == "block") {
    out += "allocated:     "
           + (f.allocated ? format_size(*f.allocated) + " of the host's, for its image"
                          : unmeasured)
           + "\n";
    out += "direct I/O:    " + direct_io_line(rec, f.direct_io) + "\n";
  }
  out += health_lines(f);
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

} // namespace berth::cli
