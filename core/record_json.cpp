// A volume record as JSON, written: the journal's and the snapshot's records, the
// admin API's answers. The fields, their keys and when each is written come from the
// record's table (fields_of in core/volume_record.hpp); this file knows only how each
// type of value is written. Reading them back is record_json_read.cpp.

#include "core/record_json.hpp"

#include <utility>

namespace berth {

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

void put(json_writer& w, const std::string& s) {
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
}

void put(json_writer& w, bool b) {
  w.Bool(b);
}

void put(json_writer& w, uint32_t n) {
  w.Uint(n);
}

void put(json_writer& w, uint64_t n) {
  w.Uint64(n);
}

void put(json_writer& w, int64_t n) {
  w.Int64(n);
}

void put(json_writer& w, record_kind k) {
  put(w, to_string(k));
}

void put(json_writer& w, record_owner o) {
  put(w, to_string(o));
}

void put(json_writer& w, const content_source& src) {
  put(w, src.describe()); // "snapshot:NAME": the form state files always had
}

void put(json_writer& w, const std::vector<std::string>& xs) {
  w.StartArray();
  for (const auto& x : xs) {
    put(w, x);
  }
  w.EndArray();
}

template <class T>
void put_members(json_writer& w, const T& x, record_shape shape);

/// A struct with a table (a publication, a mount ID's origin) as one object.
template <class T, class = decltype(fields_of(std::declval<const T&>()))>
void put(json_writer& w, const T& x) {
  w.StartObject();
  put_members(w, x, record_shape::journal);
  w.EndObject();
}

template <class V>
void put(json_writer& w, const std::map<std::string, V>& m) {
  w.StartObject();
  for (const auto& [k, v] : m) {
    w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
    put(w, v);
  }
  w.EndObject();
}

/// Whether `x` differs from its type's default (write_when::set).
template <class T>
bool is_set(const T& x) {
  return !(x == T{});
}

bool is_set(const content_source& src) {
  return !src.empty();
}

/// Whether the record holding a field is staged: only a volume record can be.
bool staged(const volume_record& rec) {
  return !rec.staging_path.empty();
}

template <class T>
bool staged(const T&) {
  return false;
}

/// The members of `x`, each as its table says when.
template <class T>
void put_members(json_writer& w, const T& x, record_shape shape) {
  visit_fields(x, [&](const auto& fd, const auto& value) {
    bool written = true;
    switch (fd.when) {
      case write_when::always:
        break;
      case write_when::set:
        written = is_set(value);
        break;
      case write_when::set_or_full:
        written = shape == record_shape::full || is_set(value);
        break;
      case write_when::staged:
        written = staged(x);
        break;
      case write_when::staged_and_set:
        written = staged(x) && is_set(value);
        break;
    }
    if (written) {
      w.Key(fd.key);
      put(w, value);
    }
  });
}

} // namespace

void write_record(rapidjson::Writer<rapidjson::StringBuffer>& w, const volume_record& rec,
                  record_shape shape,
                  const std::function<void(rapidjson::Writer<rapidjson::StringBuffer>&)>& extra) {
  w.StartObject();
  put_members(w, rec, shape);
  if (extra) {
    extra(w);
  }
  w.EndObject();
}

void write_health(rapidjson::Writer<rapidjson::StringBuffer>& w, const volume_conditions& c) {
  w.Key("health");
  w.String(c.empty() ? "healthy" : "abnormal");
  if (c.empty()) {
    return;
  }
  w.Key("conditions");
  w.StartArray();
  for (const auto& one : c) {
    w.StartObject();
    w.Key("reason");
    w.String(abnormal_reason_name(one.reason));
    w.Key("message");
    w.String(one.message.c_str(), static_cast<rapidjson::SizeType>(one.message.size()));
    w.EndObject();
  }
  w.EndArray();
}

std::string record_to_json(const volume_record& rec, record_shape shape) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  write_record(w, rec, shape);
  return {buf.GetString(), buf.GetSize()};
}

} // namespace berth
