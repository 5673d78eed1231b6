// A volume record as JSON, written: the journal's and the snapshot's records, the
// admin API's answers. Reading them back is record_json_read.cpp.

#include "core/record_json.hpp"

namespace berth {

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

void put_string(json_writer& w, const std::string& s) {
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
}

void put_strings(json_writer& w, const std::vector<std::string>& xs) {
  w.StartArray();
  for (const auto& x : xs) {
    put_string(w, x);
  }
  w.EndArray();
}

void put_map(json_writer& w, const option_map& m) {
  w.StartObject();
  for (const auto& [k, v] : m) {
    w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
    put_string(w, v);
  }
  w.EndObject();
}

/// The CSI fields, written only when set (record_shape::journal) so Docker records stay
/// as small as before; record_shape::full writes size, parameters and modifications always.
void write_csi_fields(json_writer& w, const volume_record& rec, record_shape shape) {
  bool full = shape == record_shape::full;
  if (rec.kind != record_kind::volume) {
    w.Key("kind");
    put_string(w, to_string(rec.kind));
  }
  if (full || rec.capacity_bytes != 0) {
    w.Key("capacity_bytes");
    w.Uint64(rec.capacity_bytes);
  }
  if (!rec.source.empty()) {
    w.Key("source");
    put_string(w, rec.source.describe()); // "snapshot:NAME": the form state files always had
  }
  if (!rec.staging_path.empty()) {
    w.Key("staging_path");
    put_string(w, rec.staging_path);
    w.Key("staged_block");
    w.Bool(rec.staged_block);
    w.Key("stage_flags");
    put_strings(w, rec.stage_flags);
    if (!rec.stage_fs_type.empty()) {
      w.Key("stage_fs_type");
      put_string(w, rec.stage_fs_type);
    }
  }
  if (!rec.device.empty()) {
    w.Key("device");
    put_string(w, rec.device);
  }
  if (full || !rec.mutable_parameters.empty()) {
    w.Key("mutable_parameters");
    put_map(w, rec.mutable_parameters);
  }
  if (full || rec.modifications != 0) {
    w.Key("modifications");
    w.Uint64(rec.modifications);
  }
  if (!rec.consistency.empty()) {
    w.Key("consistency");
    put_string(w, rec.consistency);
  }
  if (!rec.published.empty()) {
    w.Key("published");
    w.StartObject();
    for (const auto& [target, how] : rec.published) {
      w.Key(target.c_str(), static_cast<rapidjson::SizeType>(target.size()));
      w.StartObject();
      w.Key("readonly");
      w.Bool(how.readonly);
      w.Key("block");
      w.Bool(how.block);
      w.Key("flags");
      put_strings(w, how.flags);
      w.Key("created");
      w.Bool(how.created);
      w.EndObject();
    }
    w.EndObject();
  }
}

/// "mount_origins": {ID: {"dockerd": KEY, "last_mounted_ms": MS}}, in both shapes,
/// only when the record holds one (Docker records of older state stay as they were).
void write_origins(json_writer& w, const volume_record& rec) {
  if (rec.origins.empty()) {
    return;
  }
  w.Key("mount_origins");
  w.StartObject();
  for (const auto& [id, origin] : rec.origins) {
    w.Key(id.c_str(), static_cast<rapidjson::SizeType>(id.size()));
    w.StartObject();
    w.Key("dockerd");
    put_string(w, origin.dockerd);
    w.Key("last_mounted_ms");
    w.Int64(origin.last_mounted_ms);
    w.EndObject();
  }
  w.EndObject();
}

} // namespace

void write_record(rapidjson::Writer<rapidjson::StringBuffer>& w, const volume_record& rec,
                  record_shape shape,
                  const std::function<void(rapidjson::Writer<rapidjson::StringBuffer>&)>& extra) {
  w.StartObject();
  w.Key("name");
  w.String(rec.name.c_str(), static_cast<rapidjson::SizeType>(rec.name.size()));
  w.Key("backend");
  w.String(rec.backend.c_str(), static_cast<rapidjson::SizeType>(rec.backend.size()));
  w.Key("options");
  put_map(w, rec.options);
  w.Key("created_at");
  w.String(rec.created_at.c_str(), static_cast<rapidjson::SizeType>(rec.created_at.size()));
  w.Key("mounts");
  w.StartObject();
  for (const auto& [id, n] : rec.mounts) {
    w.Key(id.c_str(), static_cast<rapidjson::SizeType>(id.size()));
    w.Uint(n);
  }
  w.EndObject();
  write_origins(w, rec);
  w.Key("mounted");
  w.Bool(rec.mounted);
  w.Key("mountpoint");
  w.String(rec.mountpoint.c_str(), static_cast<rapidjson::SizeType>(rec.mountpoint.size()));
  if (!rec.owner.empty()) {
    w.Key("owner");
    put_string(w, rec.owner);
  }
  write_csi_fields(w, rec, shape);
  if (extra) {
    extra(w);
  }
  w.EndObject();
}

std::string record_to_json(const volume_record& rec, record_shape shape) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  write_record(w, rec, shape);
  return {buf.GetString(), buf.GetSize()};
}

} // namespace berth
