#include "core/record_json.hpp"

#include "core/errors.hpp"

namespace berth {

void write_record(rapidjson::Writer<rapidjson::StringBuffer>& w, const volume_record& rec) {
  w.StartObject();
  w.Key("name");
  w.String(rec.name.c_str(), static_cast<rapidjson::SizeType>(rec.name.size()));
  w.Key("backend");
  w.String(rec.backend.c_str(), static_cast<rapidjson::SizeType>(rec.backend.size()));
  w.Key("options");
  w.StartObject();
  for (const auto& [k, v] : rec.options) {
    w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
    w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  }
  w.EndObject();
  w.Key("created_at");
  w.String(rec.created_at.c_str(), static_cast<rapidjson::SizeType>(rec.created_at.size()));
  w.Key("mounts");
  w.StartObject();
  for (const auto& [id, n] : rec.mounts) {
    w.Key(id.c_str(), static_cast<rapidjson::SizeType>(id.size()));
    w.Uint(n);
  }
  w.EndObject();
  w.Key("mounted");
  w.Bool(rec.mounted);
  w.Key("mountpoint");
  w.String(rec.mountpoint.c_str(), static_cast<rapidjson::SizeType>(rec.mountpoint.size()));
  w.EndObject();
}

std::string record_to_json(const volume_record& rec) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  write_record(w, rec);
  return {buf.GetString(), buf.GetSize()};
}

namespace {

caf::error bad(const std::string& what) {
  return make_error(ec::invalid_argument, "invalid volume record: " + what);
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
  if (auto err = str("mountpoint", rec.mountpoint, false)) {
    return err;
  }
  if (auto it = v.FindMember("options"); it != v.MemberEnd() && !it->value.IsNull()) {
    if (!it->value.IsObject()) {
      return bad("\"options\" is not an object");
    }
    for (const auto& m : it->value.GetObject()) {
      if (!m.value.IsString()) {
        return bad(std::string{"option \""} + m.name.GetString() + "\" is not a string");
      }
      rec.options[m.name.GetString()] = m.value.GetString();
    }
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
  if (auto it = v.FindMember("mounted"); it != v.MemberEnd()) {
    if (!it->value.IsBool()) {
      return bad("\"mounted\" is not a boolean");
    }
    rec.mounted = it->value.GetBool();
  } else {
    // An older record without the flag: mounted whenever some ID holds it.
    rec.mounted = total_mounts(rec) > 0;
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

} // namespace berth
