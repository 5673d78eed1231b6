// A volume record read back from JSON (record_json.hpp). The fields and their keys come
// from the record's table (fields_of in core/volume_record.hpp); this file knows how each
// type of value is read and checked, with a load error naming where the bad value is,
// and how older shapes and the ECS plugin's null counts load as the record they meant.
// Writing is record_json.cpp.

#include <iterator>
#include <string_view>

#include "core/errors.hpp"
#include "core/record_json.hpp"

namespace berth {

namespace {

using json_value = rapidjson::Value;

caf::error bad(const std::string& what) {
  return make_error(ec::invalid_argument, "invalid volume record: " + what);
}

std::string quoted(std::string_view s) {
  return "\"" + std::string{s} + "\"";
}

// -- one value of each type; `where` names it in errors ------------------------------

caf::error get(const json_value& v, std::string& out, const std::string& where, const char*) {
  if (!v.IsString()) {
    return bad(where + " is not a string");
  }
  out.assign(v.GetString(), v.GetStringLength());
  return {};
}

caf::error get(const json_value& v, bool& out, const std::string& where, const char*) {
  if (!v.IsBool()) {
    return bad(where + " is not a boolean");
  }
  out = v.GetBool();
  return {};
}

caf::error get(const json_value& v, uint64_t& out, const std::string& where, const char*) {
  if (!v.IsUint64()) {
    return bad(where + " is not an unsigned integer");
  }
  out = v.GetUint64();
  return {};
}

caf::error get(const json_value& v, int64_t& out, const std::string& where, const char*) {
  if (!v.IsInt64()) {
    return bad(where + " is not an integer");
  }
  out = v.GetInt64();
  return {};
}

/// A value the journal spells as a string: `parse` reads it, `expected` says what it
/// should have been.
template <class T, class Parse>
caf::error get_spelt(const json_value& v, T& out, const std::string& where, Parse parse,
                     const char* expected) {
  std::string s;
  if (auto err = get(v, s, where, nullptr)) {
    return err;
  }
  auto parsed = parse(s);
  if (!parsed) {
    return bad(where + " " + quoted(s) + " is not " + expected);
  }
  out = std::move(*parsed);
  return {};
}

caf::error get(const json_value& v, record_kind& out, const std::string& where, const char*) {
  return get_spelt(v, out, where, parse_record_kind, "\"volume\" or \"snapshot\"");
}

/// "docker" or "csi"; "" (never written) reads as unset, whose owner owner_of() infers.
caf::error get(const json_value& v, record_owner& out, const std::string& where, const char*) {
  return get_spelt(v, out, where, parse_record_owner, "\"docker\" or \"csi\"");
}

caf::error get(const json_value& v, content_source& out, const std::string& where, const char*) {
  return get_spelt(v, out, where, parse_content_source,
                   "\"snapshot:NAME\" or \"volume:NAME\"");
}

caf::error get(const json_value& v, std::vector<std::string>& out, const std::string& where,
               const char*) {
  if (!v.IsArray()) {
    return bad(where + " is not an array");
  }
  for (const auto& x : v.GetArray()) {
    if (!x.IsString()) {
      return bad("an element of " + where + " is not a string");
    }
    out.emplace_back(x.GetString(), x.GetStringLength());
  }
  return {};
}

/// Mount counts in every shape they were stored in: {ID: N}, where older berth and
/// amazon-ecs-volume-plugin store null (or 0) and it still counts once, or [ID, ...].
caf::error get(const json_value& v, mount_counts& out, const std::string& where,
               const char* entry) {
  if (v.IsArray()) {
    for (const auto& id : v.GetArray()) {
      if (!id.IsString()) {
        return bad("a mount ID in " + where + " is not a string");
      }
      out[std::string{id.GetString(), id.GetStringLength()}] = 1;
    }
    return {};
  }
  if (!v.IsObject()) {
    return bad(where + " is neither an object nor an array");
  }
  for (const auto& m : v.GetObject()) {
    uint32_t n = 1;
    if (m.value.IsUint() && m.value.GetUint() > 0) {
      n = m.value.GetUint();
    } else if (!m.value.IsNull() && !m.value.IsNumber() && !m.value.IsBool()) {
      return bad(std::string{entry} + " " + quoted(m.name.GetString()) + " in " + where
                 + " is not a number");
    }
    out[std::string{m.name.GetString(), m.name.GetStringLength()}] = n;
  }
  return {};
}

template <class T>
caf::error get_members(const json_value& v, T& x, const std::string& of);

/// A struct with a table (a publication, a mount ID's origin): an object of its fields.
template <class T, class = decltype(fields_of(std::declval<const T&>()))>
caf::error get(const json_value& v, T& out, const std::string& where, const char*) {
  if (!v.IsObject()) {
    return bad(where + " is not an object");
  }
  return get_members(v, out, " of " + where);
}

/// An object of values; `entry` names one of them in errors ("option \"o\" in \"options\"").
template <class V>
caf::error get(const json_value& v, std::map<std::string, V>& out, const std::string& where,
               const char* entry) {
  if (!v.IsObject()) {
    return bad(where + " is not an object");
  }
  for (const auto& m : v.GetObject()) {
    std::string key{m.name.GetString(), m.name.GetStringLength()};
    V value{};
    auto at = std::string{entry != nullptr ? entry : "entry"} + " " + quoted(key) + " in " + where;
    if (auto err = get(m.value, value, at, nullptr)) {
      return err;
    }
    out[key] = std::move(value);
  }
  return {};
}

/// Every field of `x` that `v` holds; an absent or null one keeps its default. `of` says
/// whose fields they are in errors (" of publication \"/t\" in \"published\"").
template <class T>
caf::error get_members(const json_value& v, T& x, const std::string& of) {
  caf::error err;
  visit_fields(x, [&](const auto& fd, auto& value) {
    if (err) {
      return;
    }
    auto where = quoted(fd.key) + of;
    auto it = v.FindMember(fd.key);
    if (it == v.MemberEnd() || it->value.IsNull()) {
      if (fd.required) {
        err = bad("missing " + where);
      }
      return;
    }
    err = get(it->value, value, where, fd.entry);
  });
  return err;
}

/// What the fields alone do not say: the rules that make an older record, or one the
/// fuzzer made, the record it meant and one that round-trips.
caf::error complete(const json_value& v, volume_record& rec) {
  if (rec.backend.empty()) {
    rec.backend = "local";
  }
  // How a volume is staged exists only while it is (set_unstaged clears it, and
  // write_record writes it only then): kept without a staging path, it would be lost
  // at the next write, so the record read would not be the record written back.
  if (rec.staging_path.empty()) {
    rec.staged_block = false;
    rec.stage_flags.clear();
    rec.stage_fs_type.clear();
  }
  // An origin of an ID that "mounts" does not count is dropped: keys(origins) ⊆
  // keys(mounts). A wrong type was an error whatever the ID.
  for (auto it = rec.origins.begin(); it != rec.origins.end();) {
    it = rec.mounts.count(it->first) > 0 ? std::next(it) : rec.origins.erase(it);
  }
  // An older record without the flag: mounted whenever some ID holds it. A null is no
  // older shape: refused, as a wrong type is.
  if (auto it = v.FindMember("mounted"); it == v.MemberEnd()) {
    rec.mounted = total_mounts(rec) > 0;
  } else if (it->value.IsNull()) {
    return bad("\"mounted\" is not a boolean");
  }
  // Older state has no owner: owner_of() infers it from fields that never change over
  // the record's life (rule there), so it is left unset here.
  return {};
}

} // namespace

caf::expected<volume_record> read_record(const rapidjson::Value& v) {
  if (!v.IsObject()) {
    return bad("not a JSON object");
  }
  volume_record rec;
  if (auto err = get_members(v, rec, "")) {
    return err;
  }
  if (auto err = complete(v, rec)) {
    return err;
  }
  return rec;
}

caf::expected<volume_record> record_from_json(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError()) {
    return bad("malformed JSON");
  }
  return read_record(doc);
}

caf::expected<std::vector<volume_record>> records_from_json(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsArray()) {
    return make_error(ec::invalid_argument, "a volume list that is not a JSON array");
  }
  std::vector<volume_record> out;
  out.reserve(doc.Size());
  for (const auto& v : doc.GetArray()) {
    auto rec = read_record(v);
    if (!rec) {
      return rec.error();
    }
    out.push_back(std::move(*rec));
  }
  return out;
}

} // namespace berth
