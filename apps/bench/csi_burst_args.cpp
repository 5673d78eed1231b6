#include "apps/bench/csi_burst.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <numeric>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/defaults.hpp"

namespace berth::bench {

namespace {

/// `value` as an integer in [min, max], or nothing.
std::optional<long> to_long(const std::string& value, long min, long max) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(value.c_str(), &end, 10);
  if (errno != 0 || value.empty() || *end != '\0' || v < min || v > max) {
    return std::nullopt;
  }
  return v;
}

} // namespace

std::optional<std::string> parse_burst_args(const std::vector<std::string>& args,
                                            burst_options& out) {
  burst_options opt;
  opt.admin_socket = defaults::admin_socket;
  bool have_clients = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& flag = args[i];
    if (flag == "--help" || flag == "-h") {
      opt.help = true;
      out = opt;
      return std::nullopt;
    }
    if (i + 1 >= args.size()) {
      return flag.rfind("--", 0) == 0 ? flag + " needs a value" : "unexpected '" + flag + "'";
    }
    const auto& value = args[++i];
    auto number = [&](long min, long max, long& into) -> std::optional<std::string> {
      auto v = to_long(value, min, max);
      if (!v) {
        return flag + " needs an integer from " + std::to_string(min) + " to "
               + std::to_string(max) + ", got '" + value + "'";
      }
      into = *v;
      return std::nullopt;
    };
    std::optional<std::string> err;
    if (flag == "--endpoint") {
      opt.endpoint = value;
    } else if (flag == "--clients") {
      err = number(1, 4096, opt.clients);
      have_clients = true;
    } else if (flag == "--rounds") {
      err = number(1, 100000, opt.rounds);
    } else if (flag == "--admin-socket") {
      opt.admin_socket = value;
    } else if (flag == "--prefix") {
      opt.prefix = value;
    } else if (flag == "--size-mb") {
      err = number(1, 1L << 30, opt.size_mb);
    } else if (flag == "--step-mb") {
      err = number(1, 1L << 20, opt.step_mb);
    } else if (flag == "--parameter") {
      opt.parameter = value;
    } else {
      return "unknown option '" + flag + "'";
    }
    if (err) {
      return err;
    }
  }
  if (opt.endpoint.empty()) {
    return std::string{"--endpoint is required (unix:///PATH)"};
  }
  if (opt.endpoint.rfind("unix:", 0) != 0) {
    if (opt.endpoint.front() != '/') {
      return "--endpoint must be unix:///PATH, got '" + opt.endpoint + "'";
    }
    opt.endpoint = "unix://" + opt.endpoint;
  }
  if (!have_clients) {
    return std::string{"csi-burst mode needs --clients"};
  }
  if (opt.admin_socket.empty()) {
    return std::string{"--admin-socket must not be empty"};
  }
  if (opt.prefix.empty()) {
    return std::string{"--prefix must not be empty"};
  }
  if (opt.parameter.empty()) {
    return std::string{"--parameter must not be empty"};
  }
  out = opt;
  return std::nullopt;
}

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
