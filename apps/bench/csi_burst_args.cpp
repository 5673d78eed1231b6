#include "apps/bench/csi_burst.hpp"

#include <numeric>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace berth::bench {

uint64_t burst_size_bytes(const burst_options& opt, long round) {
  auto mb = static_cast<uint64_t>(opt.size_mb) + static_cast<uint64_t>(opt.step_mb)
                                                   * static_cast<uint64_t>(round + 1);
  return mb << 20;
}

std::string burst_parameter_value(long round) {
  return std::to_string(128 * (round + 2)); // 256, 384, ... KiB: each round its own
}

std::string burst_json(const burst_options& opt, burst_result& result) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  w.SetMaxDecimalPlaces(3);
  w.StartObject();
  w.Key("mode");
  w.String("csi-burst");
  w.Key("endpoint");
  w.String(opt.endpoint.c_str(), static_cast<rapidjson::SizeType>(opt.endpoint.size()));
  w.Key("clients");
  w.Int64(opt.clients);
  w.Key("rounds");
  w.Int64(opt.rounds);
  w.Key("backend_calls_per_burst");
  if (result.backend_calls.empty()) {
    w.Null();
  } else {
    auto sum = std::accumulate(result.backend_calls.begin(), result.backend_calls.end(),
                               uint64_t{0});
    w.Double(static_cast<double>(sum) / static_cast<double>(result.backend_calls.size()));
  }
  w.Key("backend_calls");
  w.StartArray();
  for (auto n : result.backend_calls) {
    w.Uint64(n);
  }
  w.EndArray();
  w.Key("errors");
  w.Uint64(result.errors);
  w.Key("calls_ok");
  w.Uint64(result.latency.count());
  w.Key("p50_ms");
  w.Double(result.latency.percentile(50));
  w.Key("p99_ms");
  w.Double(result.latency.percentile(99));
  w.Key("max_ms");
  w.Double(result.latency.max());
  w.Key("expand_p99_ms");
  w.Double(result.expand.percentile(99));
  w.Key("modify_p99_ms");
  w.Double(result.modify.percentile(99));
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

} // namespace berth::bench
