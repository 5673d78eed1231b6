#include "apps/berthctl/berthctl_status.hpp"

#include <cmath>

#include <rapidjson/document.h>

#include "apps/berthctl/berthctl_cli.hpp"
#include "apps/berthctl/top_view.hpp"
#include "core/errors.hpp"

namespace berth::cli {

namespace {

caf::error bad_field(const char* key, const char* want) {
  return make_error(ec::invalid_argument, std::string{"an unreadable /v1/status answer: \""}
                                            + key + "\" is missing or not " + want);
}

template <class T, class Check, class Get>
caf::error read(const rapidjson::Value& obj, const char* key, T& out, Check check, Get get,
                const char* want) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !(it->value.*check)()) {
    return bad_field(key, want);
  }
  out = static_cast<T>((it->value.*get)());
  return {};
}

caf::error read_string(const rapidjson::Value& obj, const char* key, std::string& out) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsString()) {
    return bad_field(key, "a string");
  }
  out.assign(it->value.GetString(), it->value.GetStringLength());
  return {};
}

caf::error read_int(const rapidjson::Value& obj, const char* key, int64_t& out) {
  return read(obj, key, out, &rapidjson::Value::IsInt64, &rapidjson::Value::GetInt64,
              "an integer");
}

caf::error read_uint(const rapidjson::Value& obj, const char* key, uint64_t& out) {
  return read(obj, key, out, &rapidjson::Value::IsUint64, &rapidjson::Value::GetUint64,
              "a non-negative integer");
}

caf::error read_double(const rapidjson::Value& obj, const char* key, double& out) {
  return read(obj, key, out, &rapidjson::Value::IsNumber, &rapidjson::Value::GetDouble,
              "a number");
}

std::string plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

} // namespace

caf::expected<status_info> parse_status(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return make_error(ec::invalid_argument, "an unreadable /v1/status answer: not a JSON object");
  }
  status_info s;
  auto ready = doc.FindMember("ready");
  if (ready == doc.MemberEnd() || !ready->value.IsBool()) {
    return bad_field("ready", "true or false");
  }
  s.ready = ready->value.GetBool();
  auto volumes = doc.FindMember("volumes");
  if (volumes == doc.MemberEnd() || !volumes->value.IsObject()) {
    return bad_field("volumes", "an object");
  }
  auto states = volumes->value.FindMember("by_state");
  if (states == volumes->value.MemberEnd() || !states->value.IsObject()) {
    return bad_field("volumes.by_state", "an object");
  }
  for (const auto& m : states->value.GetObject()) {
    if (!m.value.IsInt64()) {
      return bad_field("volumes.by_state", "an object of integers");
    }
    s.by_state[m.name.GetString()] = m.value.GetInt64();
  }
  for (auto err : {read_string(doc, "version", s.version),
                   read_string(doc, "revision", s.revision),
                   read_string(doc, "started_at", s.started_at),
                   read_double(doc, "uptime_seconds", s.uptime_seconds),
                   read_string(doc, "not_ready_reason", s.not_ready_reason),
                   read_int(volumes->value, "total", s.volumes),
                   read_int(doc, "snapshots", s.snapshots),
                   read_int(doc, "mount_ids", s.mount_ids),
                   read_int(doc, "csi_staged", s.csi_staged),
                   read_int(doc, "csi_published", s.csi_published),
                   read_int(doc, "uncertain", s.uncertain),
                   read_int(doc, "reconcile_pending", s.reconcile_pending),
                   read_int(doc, "journal_bytes", s.journal_bytes),
                   read_uint(doc, "journal_appends", s.journal_appends),
                   read_uint(doc, "fsyncs", s.fsyncs),
                   read_double(doc, "last_fsync_seconds", s.last_fsync_seconds)}) {
    if (err) {
      return err;
    }
  }
  return s;
}

std::string format_uptime(double seconds) {
  auto total = seconds > 0 ? static_cast<uint64_t>(std::floor(seconds)) : uint64_t{0};
  auto d = total / 86400;
  auto h = total % 86400 / 3600;
  auto m = total % 3600 / 60;
  auto sec = total % 60;
  if (d > 0) {
    return std::to_string(d) + "d " + std::to_string(h) + "h";
  }
  if (h > 0) {
    return std::to_string(h) + "h " + std::to_string(m) + "m";
  }
  if (m > 0) {
    return std::to_string(m) + "m " + std::to_string(sec) + "s";
  }
  return std::to_string(sec) + "s";
}

std::string format_status(const status_info& s) {
  auto state = [&s](const char* name) {
    auto it = s.by_state.find(name);
    return std::to_string(it == s.by_state.end() ? 0 : it->second) + " " + name;
  };
  std::string out;
  out += "version:    berthd " + s.version + " (revision " + s.revision + ")\n";
  out += "uptime:     " + format_uptime(s.uptime_seconds) + " (since " + s.started_at + ")\n";
  out += "ready:      " + (s.ready ? std::string{"yes"} : "no: " + s.not_ready_reason) + "\n";
  out += "volumes:    " + std::to_string(s.volumes) + " (" + state("idle") + ", "
         + state("mounted") + ", " + state("staged") + ", " + state("published") + "); "
         + plural(s.snapshots, "snapshot", "snapshots") + "\n";
  out += "mounts:     " + plural(s.mount_ids, "Docker mount ID", "Docker mount IDs") + "; CSI "
         + std::to_string(s.csi_staged) + " staged, " + std::to_string(s.csi_published)
         + " published\n";
  if (s.uncertain > 0) {
    out += "uncertain:  " + plural(s.uncertain, "volume", "volumes")
           + " with a hung backend call\n";
  }
  if (s.reconcile_pending > 0) {
    out += "reconcile:  " + plural(s.reconcile_pending, "volume", "volumes")
           + " still reconciling with the host\n";
  }
  auto bytes = static_cast<uint64_t>(s.journal_bytes > 0 ? s.journal_bytes : 0);
  out += "journal:    " + (bytes == 0 ? std::string{"0 bytes"} : format_size(bytes)) + ", "
         + std::to_string(s.journal_appends) + " appends\n";
  out += "last fsync: "
         + (s.fsyncs == 0 ? std::string{"- (none yet)"}
                          : format_latency(s.last_fsync_seconds) + " (" + std::to_string(s.fsyncs)
                              + " fsyncs)")
         + "\n";
  return out;
}

} // namespace berth::cli
