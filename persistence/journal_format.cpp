#include "persistence/journal_format.hpp"

#include <cstring>

#include <boost/crc.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/names.hpp"
#include "core/record_json.hpp"

namespace berth::detail {

namespace {

constexpr size_t header_bytes = frame_header_bytes;
/// The largest payload a frame may carry: encode refuses more, decode calls more damage.
constexpr uint32_t max_payload_bytes = limits::max_frame_bytes - header_bytes;

uint32_t crc32(const char* data, size_t size) {
  boost::crc_32_type crc;
  crc.process_bytes(data, size);
  return crc.checksum();
}

void put_u32(std::string& out, uint32_t x) {
  for (int i = 0; i < 4; ++i) {
    out.push_back(static_cast<char>((x >> (8 * i)) & 0xff));
  }
}

uint32_t get_u32(const char* p) {
  uint32_t x = 0;
  for (int i = 3; i >= 0; --i) {
    x = (x << 8) | static_cast<unsigned char>(p[i]);
  }
  return x;
}

caf::error bad(const std::string& what) {
  return make_error(ec::persist_failure, what);
}

} // namespace

namespace {

void put_frame(const char* payload, uint32_t size, std::string& out) {
  put_u32(out, size);
  put_u32(out, crc32(payload, size));
  out.append(payload, size);
}

} // namespace

caf::error encode_entry(const journal_entry& entry, std::string& out) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("op");
  if (entry.erases()) {
    w.String("erase");
    w.Key("name");
    w.String(entry.erased.c_str(), static_cast<rapidjson::SizeType>(entry.erased.size()));
  } else {
    w.String("put");
    w.Key("record");
    write_record(w, *entry.record);
  }
  w.EndObject();
  if (buf.GetSize() > max_payload_bytes) {
    return make_error(ec::out_of_range,
                      "volume " + entry.name() + ": its record would be "
                        + std::to_string(buf.GetSize() + header_bytes)
                        + " bytes in the journal, over the limit of "
                        + std::to_string(limits::max_frame_bytes)
                        + " bytes; the change is refused (fewer mount IDs, targets, options or"
                          " flags make it smaller)");
  }
  put_frame(buf.GetString(), static_cast<uint32_t>(buf.GetSize()), out);
  return {};
}

void encode_journal_header(uint64_t generation, std::string& out) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("op");
  w.String("journal");
  w.Key("generation");
  w.Uint64(generation);
  w.EndObject();
  put_frame(buf.GetString(), static_cast<uint32_t>(buf.GetSize()), out);
}

namespace {

/// How the frame at `pos` looks.
enum class frame_status { good, torn, bad_checksum, oversize };

frame_status check_frame(const std::string& data, size_t pos, uint32_t& size) {
  if (data.size() - pos < header_bytes) {
    return frame_status::torn;
  }
  size = get_u32(data.data() + pos);
  auto crc = get_u32(data.data() + pos + 4);
  if (size > max_payload_bytes) {
    // No writer makes such a frame, and a torn write leaves a prefix of a real one: this
    // length field was damaged after it was written.
    return frame_status::oversize;
  }
  if (data.size() - pos - header_bytes < size) {
    return frame_status::torn;
  }
  if (crc32(data.data() + pos + header_bytes, size) != crc) {
    return frame_status::bad_checksum;
  }
  return frame_status::good;
}

/// Parses a header payload {"op":"journal","generation":N}; false when it is none.
bool parse_header(const char* payload, size_t size, uint64_t& generation) {
  rapidjson::Document doc;
  doc.Parse(payload, size);
  if (doc.HasParseError() || !doc.IsObject()) {
    return false;
  }
  auto op = doc.FindMember("op");
  auto gen = doc.FindMember("generation");
  if (op == doc.MemberEnd() || !op->value.IsString()
      || std::strcmp(op->value.GetString(), "journal") != 0 || gen == doc.MemberEnd()
      || !gen->value.IsUint64()) {
    return false;
  }
  generation = gen->value.GetUint64();
  return true;
}

/// Parses one payload; false when it is not a journal entry.
bool parse_payload(const char* payload, size_t size, journal_entry& entry) {
  rapidjson::Document doc;
  doc.Parse(payload, size);
  if (doc.HasParseError() || !doc.IsObject()) {
    return false;
  }
  auto op = doc.FindMember("op");
  if (op == doc.MemberEnd() || !op->value.IsString()) {
    return false;
  }
  if (std::strcmp(op->value.GetString(), "erase") == 0) {
    auto name = doc.FindMember("name");
    if (name == doc.MemberEnd() || !name->value.IsString()) {
      return false;
    }
    entry = journal_entry::erasure(name->value.GetString());
    return is_valid_volume_name(entry.erased);
  }
  if (std::strcmp(op->value.GetString(), "put") == 0) {
    auto rec_json = doc.FindMember("record");
    if (rec_json == doc.MemberEnd()) {
      return false;
    }
    auto rec = read_record(rec_json->value);
    if (!rec || !is_valid_volume_name(rec->name)) {
      return false;
    }
    entry = journal_entry::put(std::move(*rec));
    return true;
  }
  return false;
}

} // namespace

decoded_journal decode_entries(const std::string& data) {
  decoded_journal out;
  size_t pos = 0;
  while (pos < data.size()) {
    uint32_t size = 0;
    auto status = check_frame(data, pos, size);
    if (status == frame_status::torn) {
      out.problem = "torn record at byte " + std::to_string(pos);
      break;
    }
    if (status == frame_status::oversize) {
      out.problem = "record at byte " + std::to_string(pos) + " claims " + std::to_string(size)
                    + " bytes, over the limit of " + std::to_string(max_payload_bytes)
                    + ": its length field is damaged";
      out.corrupt_middle = true;
      break;
    }
    size_t next = pos + header_bytes + size;
    if (status == frame_status::bad_checksum) {
      // A torn write leaves garbage only at the end; a good record behind a bad one is
      // damage in the middle. (A length field damaged to a value within the limit cannot be
      // told apart from a torn tail; one beyond it is caught above.)
      uint32_t next_size = 0;
      out.problem = "checksum mismatch at byte " + std::to_string(pos);
      out.corrupt_middle = next < data.size()
                           && check_frame(data, next, next_size) == frame_status::good;
      break;
    }
    if (pos == 0 && parse_header(data.data() + header_bytes, size, out.generation)) {
      out.has_header = true;
      pos = next;
      out.good_bytes = pos;
      continue;
    }
    journal_entry entry;
    if (!parse_payload(data.data() + pos + header_bytes, size, entry)) {
      // The checksum matched: a writer finished this record, so it is no torn write.
      out.problem = "unreadable record at byte " + std::to_string(pos);
      out.corrupt_middle = true;
      break;
    }
    out.entries.push_back(std::move(entry));
    pos = next;
    out.good_bytes = pos;
  }
  return out;
}

namespace {

const volume_record& record_of(const volume_record& rec) {
  return rec;
}

const volume_record& record_of(const std::shared_ptr<const volume_record>& rec) {
  return *rec;
}

template <class Volumes>
std::string encode_snapshot_of(const Volumes& volumes, const std::string& boot_id,
                               uint64_t generation) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("version");
  w.Uint(2);
  w.Key("generation");
  w.Uint64(generation);
  w.Key("boot_id");
  w.String(boot_id.c_str(), static_cast<rapidjson::SizeType>(boot_id.size()));
  w.Key("volumes");
  w.StartArray();
  for (const auto& [name, rec] : volumes) {
    write_record(w, record_of(rec));
  }
  w.EndArray();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

} // namespace

std::string encode_snapshot(const state_snapshot& state, uint64_t generation) {
  return encode_snapshot_of(state.volumes, state.boot_id, generation);
}

std::string encode_snapshot(const shared_state& state, uint64_t generation) {
  return encode_snapshot_of(state.volumes, state.boot_id, generation);
}

caf::expected<decoded_snapshot> decode_snapshot(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return bad("snapshot is not a JSON object");
  }
  if (!doc.HasMember("version") || !doc["version"].IsUint()
      || (doc["version"].GetUint() != 1 && doc["version"].GetUint() != 2)) {
    return bad("snapshot has an unknown version (this berthd reads versions 1 and 2)");
  }
  decoded_snapshot out;
  if (doc["version"].GetUint() == 2) {
    if (!doc.HasMember("generation") || !doc["generation"].IsUint64()) {
      return bad("snapshot version 2 lacks a \"generation\" number");
    }
    out.generation = doc["generation"].GetUint64();
  }
  auto& state = out.state;
  if (doc.HasMember("boot_id") && doc["boot_id"].IsString()) {
    state.boot_id = doc["boot_id"].GetString();
  }
  if (!doc.HasMember("volumes") || !doc["volumes"].IsArray()) {
    return bad("snapshot lacks a \"volumes\" array");
  }
  for (const auto& v : doc["volumes"].GetArray()) {
    auto rec = read_record(v);
    if (!rec) {
      return rec.error();
    }
    if (!is_valid_volume_name(rec->name)) {
      return bad("snapshot names an invalid volume \"" + rec->name + "\"");
    }
    auto name = rec->name;
    state.volumes.emplace(std::move(name), std::move(*rec));
  }
  return out;
}

caf::expected<state_snapshot> decode_legacy_state(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("volumes")
      || !(doc["volumes"].IsObject() || doc["volumes"].IsNull())) {
    return bad("legacy state.json lacks a \"volumes\" object");
  }
  state_snapshot state;
  if (doc["volumes"].IsNull()) {
    return state;
  }
  for (auto& m : doc["volumes"].GetObject()) {
    std::string name = m.name.GetString();
    if (!is_valid_volume_name(name)) {
      return bad("legacy state.json names an invalid volume \"" + name + "\"");
    }
    if (!m.value.IsObject()) {
      return bad("legacy state.json: volume " + name + " is not an object");
    }
    m.value.RemoveMember("name");
    m.value.AddMember("name", rapidjson::Value(name.c_str(), doc.GetAllocator()),
                      doc.GetAllocator());
    auto rec = read_record(m.value);
    if (!rec) {
      return rec.error();
    }
    state.volumes.emplace(name, std::move(*rec));
  }
  return state;
}

void apply_entry(state_snapshot& state, const journal_entry& entry) {
  if (entry.erases()) {
    state.volumes.erase(entry.erased);
  } else {
    state.volumes[entry.record->name] = *entry.record;
  }
}

void apply_entry(shared_state& state, const journal_entry& entry) {
  if (entry.erases()) {
    state.volumes.erase(entry.erased);
  } else {
    state.volumes[entry.record->name] = entry.record;
  }
}

} // namespace berth::detail
