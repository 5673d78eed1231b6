// A volume record read back from JSON (record_json.hpp): every field checked for its
// type, a load error naming the field; older shapes and the ECS plugin's null counts
// load as the record they meant. Writing is record_json.cpp.

#include "core/errors.hpp"
#include "core/record_json.hpp"

namespace berth {

namespace {

caf::error bad(const std::string& what) {
  return make_error(ec::invalid_argument, "invalid volume record: " + what);
}

caf::error read_bool(const rapidjson::Value& v, const char* key, bool& out) {
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || it->value.IsNull()) {
    return {};
  }
  if (!it->value.IsBool()) {
    return bad(std::string{"\""} + key + "\" is not a boolean");
  }
  out = it->value.GetBool();
  return {};
}

caf::error read_strings(const rapidjson::Value& v, const char* key,
                        std::vector<std::string>& out) {
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || it->value.IsNull()) {
    return {};
  }
  if (!it->value.IsArray()) {
    return bad(std::string{"\""} + key + "\" is not an array");
  }
  for (const auto& x : it->value.GetArray()) {
    if (!x.IsString()) {
      return bad(std::string{"an element of \""} + key + "\" is not a string");
    }
    out.emplace_back(x.GetString(), x.GetStringLength());
  }
  return {};
}

/// An object of strings at `key` (absent or null: empty); `entry` names one in errors.
caf::error read_map(const rapidjson::Value& v, const char* key, const char* entry,
                    option_map& out) {
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || it->value.IsNull()) {
    return {};
  }
  if (!it->value.IsObject()) {
    return bad(std::string{"\""} + key + "\" is not an object");
  }
  for (const auto& m : it->value.GetObject()) {
    if (!m.value.IsString()) {
      return bad(std::string{entry} + " \"" + m.name.GetString() + "\" is not a string");
    }
    out[m.name.GetString()] = m.value.GetString();
  }
  return {};
}

/// An unsigned integer at `key` (absent or null: unchanged).
caf::error read_uint64(const rapidjson::Value& v, const char* key, uint64_t& out) {
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || it->value.IsNull()) {
    return {};
  }
  if (!it->value.IsUint64()) {
    return bad(std::string{"\""} + key + "\" is not an unsigned integer");
  }
  out = it->value.GetUint64();
  return {};
}

caf::error read_csi_fields(const rapidjson::Value& v, volume_record& rec) {
  if (auto err = read_uint64(v, "capacity_bytes", rec.capacity_bytes)) {
    return err;
  }
  if (auto err = read_uint64(v, "modifications", rec.modifications)) {
    return err;
  }
  if (auto err = read_map(v, "mutable_parameters", "mutable parameter", rec.mutable_parameters)) {
    return err;
  }
  if (auto err = read_bool(v, "staged_block", rec.staged_block)) {
    return err;
  }
  if (auto err = read_strings(v, "stage_flags", rec.stage_flags)) {
    return err;
  }
  auto it = v.FindMember("published");
  if (it == v.MemberEnd() || it->value.IsNull()) {
    return {};
  }
  if (!it->value.IsObject()) {
    return bad("\"published\" is not an object");
  }
  for (const auto& m : it->value.GetObject()) {
    if (!m.value.IsObject()) {
      return bad(std::string{"publication \""} + m.name.GetString() + "\" is not an object");
    }
    publication how;
    if (auto err = read_bool(m.value, "readonly", how.readonly)) {
      return err;
    }
    if (auto err = read_bool(m.value, "block", how.block)) {
      return err;
    }
    if (auto err = read_strings(m.value, "flags", how.flags)) {
      return err;
    }
    // Absent in records from before berth knew who made a target: not created,
    // so unpublish never deletes a target it cannot prove it made.
    if (auto err = read_bool(m.value, "created", how.created)) {
      return err;
    }
    rec.published.emplace(m.name.GetString(), std::move(how));
  }
  return {};
}

/// "mount_origins" (absent or null: none). Read after "mounts": an origin of an ID
/// that `mounts` does not count is dropped (keys(origins) ⊆ keys(mounts)), but a
/// wrong type is an error whatever the ID.
caf::error read_origins(const rapidjson::Value& v, volume_record& rec) {
  auto it = v.FindMember("mount_origins");
  if (it == v.MemberEnd() || it->value.IsNull()) {
    return {};
  }
  if (!it->value.IsObject()) {
    return bad("\"mount_origins\" is not an object");
  }
  for (const auto& m : it->value.GetObject()) {
    std::string id{m.name.GetString(), m.name.GetStringLength()};
    auto where = "mount origin \"" + id + "\" in \"mount_origins\"";
    if (!m.value.IsObject()) {
      return bad(where + " is not an object");
    }
    mount_id_origin origin;
    if (auto d = m.value.FindMember("dockerd"); d != m.value.MemberEnd() && !d->value.IsNull()) {
      if (!d->value.IsString()) {
        return bad("\"dockerd\" of " + where + " is not a string");
      }
      origin.dockerd.assign(d->value.GetString(), d->value.GetStringLength());
    }
    if (auto t = m.value.FindMember("last_mounted_ms");
        t != m.value.MemberEnd() && !t->value.IsNull()) {
      if (!t->value.IsInt64()) {
        return bad("\"last_mounted_ms\" of " + where
                   + " is not an integer (milliseconds since the epoch)");
      }
      origin.last_mounted_ms = t->value.GetInt64();
    }
    if (rec.mounts.count(id) > 0) {
      rec.origins[id] = std::move(origin);
    }
  }
  return {};
}

} // namespace

caf::expected<volume_record> read_record(const rapidjson::Value& v) {
  if (!v.IsObject()) {
    return bad("not a JSON object");
  }
  volume_record rec;
  auto str = [&](const char* key, std::string& out, bool required) -> caf::error {
    auto it = v.FindMember(key);
    if (it == v.MemberEnd() || it->value.IsNull()) {
      return required ? bad(std::string{"missing \""} + key + "\"") : caf::error{};
    }
    if (!it->value.IsString()) {
      return bad(std::string{"\""} + key + "\" is not a string");
    }
    out.assign(it->value.GetString(), it->value.GetStringLength());
    return {};
  };
  if (auto err = str("name", rec.name, true)) {
    return err;
  }
  if (auto err = str("backend", rec.backend, false)) {
    return err;
  }
  if (rec.backend.empty()) {
    rec.backend = "local";
  }
  if (auto err = str("created_at", rec.created_at, false)) {
    return err;
  }
  std::string kind = "volume"; // records from before snapshots have no "kind"
  std::string source;
  for (auto [key, field] : {std::pair{"mountpoint", &rec.mountpoint}, {"kind", &kind},
                            {"owner", &rec.owner},
                            {"source", &source}, {"staging_path", &rec.staging_path},
                            {"stage_fs_type", &rec.stage_fs_type}, {"device", &rec.device},
                            {"consistency", &rec.consistency}}) {
    if (auto err = str(key, *field, false)) {
      return err;
    }
  }
  if (auto k = parse_record_kind(kind)) {
    rec.kind = *k;
  } else {
    return bad("unknown \"kind\" \"" + kind + "\" (expected \"volume\" or \"snapshot\")");
  }
  if (auto src = parse_content_source(source)) {
    rec.source = std::move(*src);
  } else {
    return bad("\"source\" \"" + source
               + "\" is not \"snapshot:NAME\" or \"volume:NAME\"");
  }
  if (auto err = read_csi_fields(v, rec)) {
    return err;
  }
  // How a volume is staged exists only while it is (set_unstaged clears it, and
  // write_record writes it only then): kept without a staging path, it would be lost
  // at the next write, so the record read would not be the record written back.
  if (rec.staging_path.empty()) {
    rec.staged_block = false;
    rec.stage_flags.clear();
    rec.stage_fs_type.clear();
  }
  if (auto err = read_map(v, "options", "option", rec.options)) {
    return err;
  }
  if (auto it = v.FindMember("mounts"); it != v.MemberEnd() && !it->value.IsNull()) {
    if (it->value.IsObject()) {
      for (const auto& m : it->value.GetObject()) {
        // Older berth and amazon-ecs-volume-plugin store null (or 0) per ID: it still counts once.
        uint32_t n = 1;
        if (m.value.IsUint() && m.value.GetUint() > 0) {
          n = m.value.GetUint();
        } else if (!m.value.IsNull() && !m.value.IsNumber() && !m.value.IsBool()) {
          return bad(std::string{"mount count of \""} + m.name.GetString() + "\" is not a number");
        }
        rec.mounts[m.name.GetString()] = n;
      }
    } else if (it->value.IsArray()) {
      for (const auto& id : it->value.GetArray()) {
        if (!id.IsString()) {
          return bad("a mount ID in \"mounts\" is not a string");
        }
        rec.mounts[id.GetString()] = 1;
      }
    } else {
      return bad("\"mounts\" is neither an object nor an array");
    }
  }
  if (auto err = read_origins(v, rec)) {
    return err;
  }
  if (auto it = v.FindMember("mounted"); it != v.MemberEnd()) {
    if (!it->value.IsBool()) {
      return bad("\"mounted\" is not a boolean");
    }
    rec.mounted = it->value.GetBool();
  } else {
    // An older record without the flag: mounted whenever some ID holds it.
    rec.mounted = total_mounts(rec) > 0;
  }
  // Older state has no owner: owner_of() infers it from fields that never change
  // over the record's life (rule there), so it is left unset here.
  if (!rec.owner.empty() && rec.owner != owner_docker && rec.owner != owner_csi) {
    return bad("unknown \"owner\" \"" + rec.owner + "\"");
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
