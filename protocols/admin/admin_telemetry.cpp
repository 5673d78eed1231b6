#include "protocols/admin/admin_telemetry.hpp"

#include <map>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/build_info.hpp"
#include "core/text.hpp"

namespace berth::admin {

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

void key_string(json_writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

void write_histogram(json_writer& w, const metrics::histogram_data& h) {
  w.StartObject();
  w.Key("upper_bounds");
  w.StartArray();
  for (auto b : h.upper_bounds) {
    w.Double(b);
  }
  w.EndArray();
  w.Key("cumulative_counts");
  w.StartArray();
  for (auto c : h.cumulative_counts) {
    w.Uint64(c);
  }
  w.EndArray();
  w.Key("sum");
  w.Double(h.sum);
  w.Key("count");
  w.Uint64(h.count);
  w.EndObject();
}

} // namespace

std::string status_json(const telemetry& t, std::chrono::system_clock::time_point now) {
  // A clock set back since the start would make the uptime negative: show 0 instead.
  auto uptime = std::chrono::duration<double>(now - t.ready.started).count();
  auto reason = not_ready_reason(t);
  std::map<std::string, int64_t> by_state{{"idle", 0}, {"mounted", 0}, {"staged", 0},
                                          {"published", 0}};
  int64_t volumes = 0;
  int64_t snapshots = 0;
  for (const auto& row : t.volumes.snapshot()) {
    if (row.kind == to_string(record_kind::snapshot)) {
      snapshots += row.volumes;
    } else {
      volumes += row.volumes;
      by_state[row.state] += row.volumes;
    }
  }
  const auto& p = t.persistence;
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  key_string(w, "version", BERTH_VERSION);
  key_string(w, "revision", this_build().revision);
  key_string(w, "started_at", rfc3339(t.ready.started));
  w.Key("uptime_seconds");
  w.Double(uptime > 0 ? uptime : 0.0);
  w.Key("ready");
  w.Bool(reason.empty());
  key_string(w, "not_ready_reason", reason);
  w.Key("volumes");
  w.StartObject();
  w.Key("total");
  w.Int64(volumes);
  w.Key("by_state");
  w.StartObject();
  for (const auto& [state, n] : by_state) {
    w.Key(state.c_str());
    w.Int64(n);
  }
  w.EndObject();
  w.EndObject();
  w.Key("snapshots");
  w.Int64(snapshots);
  w.Key("mount_ids");
  w.Int64(t.volumes.mount_ids.value());
  w.Key("csi_staged");
  w.Int64(t.volumes.csi_staged.value());
  w.Key("csi_published");
  w.Int64(t.volumes.csi_published.value());
  w.Key("uncertain");
  w.Int64(t.volumes.uncertain.value());
  w.Key("reconcile_pending");
  w.Int64(t.volumes.reconcile_pending.value());
  w.Key("journal_bytes");
  w.Int64(p.journal_bytes.value());
  w.Key("journal_appends");
  w.Uint64(p.journal_appends.value());
  w.Key("fsyncs");
  w.Uint64(p.fsync_duration.snapshot().count);
  w.Key("last_fsync_seconds");
  w.Double(p.last_fsync_seconds.load(std::memory_order_relaxed));
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

std::string operations_json(const telemetry& t, std::chrono::steady_clock::time_point now) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  w.Key("monotonic_seconds");
  w.Double(std::chrono::duration<double>(now.time_since_epoch()).count());
  w.Key("operations");
  w.StartArray();
  for (const auto& row : t.operations.snapshot()) {
    uint64_t total = 0;
    for (const auto& [code, n] : row.codes) {
      total += n;
    }
    if (total == 0 && row.duration.count == 0) {
      continue;
    }
    w.StartObject();
    key_string(w, "protocol", row.key.first);
    key_string(w, "operation", row.key.second);
    w.Key("count");
    w.Uint64(total);
    w.Key("codes");
    w.StartObject();
    for (const auto& [code, n] : row.codes) {
      if (n > 0) {
        w.Key(code.c_str(), static_cast<rapidjson::SizeType>(code.size()));
        w.Uint64(n);
      }
    }
    w.EndObject();
    w.Key("duration");
    write_histogram(w, row.duration);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

} // namespace berth::admin
