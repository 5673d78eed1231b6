#include "apps/berthd/daemon_options.hpp"

#include <cstdlib>
#include <functional>

#include <unistd.h>
#include <map>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "protocols/docker/engine/engine_url.hpp"
#include "protocols/http/tcp_http_server.hpp"

namespace berth {

namespace {

caf::error usage_error(const std::string& msg) {
  return make_error(ec::invalid_argument, msg + " (see berthd --help)");
}

caf::expected<size_t> parse_count(const std::string& flag, const std::string& value) {
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos
      || value.size() > 9) {
    return usage_error(flag + " expects a non-negative number, got \"" + value + "\"");
  }
  return static_cast<size_t>(std::stoul(value));
}

} // namespace

std::string daemon_usage() {
  return R"(berthd - durable volumes for containers (Docker volume plugin, CSI driver)

Usage: berthd [options]

  --state-dir DIR           state and volumes live here (default /var/lib/berth)
  --block-dir DIR           block images live here; put it on another filesystem than
                            the state so thin images cannot fill the journal's
                            (default STATE/block)
  --journal-reserve-mb N    preallocated room (STATE/state/reserve) that keeps the
                            journal and compaction working on a full filesystem;
                            0 turns it off (default 32)
  --docker-socket PATH      Docker plugin socket; empty turns it off
                            (default /run/docker/plugins/berth.sock)
  --admin-socket PATH       berthctl socket; empty turns it off (default /run/berth/admin.sock)
  --metrics-address HOST:PORT  serve /metrics (Prometheus), /healthz and /readyz on
                            this TCP address; port 0 takes any free port (logged);
                            empty turns it off (default 127.0.0.1:9808)
  --log-format text|json    log line format (default text)
  --log-level LEVEL         trace, debug, info, warn, error (default info)
  --import-ecs-state FILE   import an amazon-ecs-volume-plugin state file when the
                            berth state is empty (replacing that plugin on a host)
  --csi-endpoint unix:///PATH  serve CSI (Identity, Controller, Node) on this socket;
                            empty turns CSI off (default $CSI_ENDPOINT, else off)
  --node-id ID              CSI node ID (default $NODE_ID, else the hostname)
  --csi-driver-name NAME    CSI plugin name (default berth.csi.dev)
  --max-volumes-per-node N  NodeGetInfo's limit; 0 = none (default 0)
  --kubelet-dir DIR         CSI staging and target paths must lie below DIR, after
                            resolving symlinks; others are refused (default /var/lib/kubelet)
  --backend-timeout-ms N    a mount/unmount that takes longer fails (unmount falls
                            back to a lazy detach) (default 30000)
  --coalesce-window-ms N    expand and modify requests for one volume that arrive within
                            N ms of the first are merged into one backend modification;
                            0 = each is its own (default 2000)
  --modify-cooldown-ms N    a volume may be modified (resized, its mutable parameters
                            changed) once per N ms, counted from the last modification
                            that succeeded; an earlier one is refused (RESOURCE_EXHAUSTED)
                            naming when to retry; 0 = no limit (default 0)
  --docker-api unix:///PATH dockerd's Engine API: berth releases the counts of Docker
                            mount IDs that dockerd will never Unmount (a crashed dockerd,
                            a destroyed container); empty turns it off
                            (default unix:///var/run/docker.sock)
  --die-grace-ms N          after a container's die event, how long dockerd may still
                            Unmount its IDs before berth releases them (default 10000,
                            at most 300000)
  --stop-timeout-ms N       on SIGTERM, wait this long for in-flight requests (default 30000)
  --executor-threads N      threads for blocking backend calls (default 16)
  --test-stall-volume NAMES TEST ONLY: stall these volumes' backend calls (a,b,...)
  --test-stall-ms N         TEST ONLY: by this many milliseconds
  --help                    this text
  --version                 the version
)";
}

caf::expected<daemon_options> parse_daemon_options(int argc, const char* const* argv) {
  daemon_options opts;
  bool csi_endpoint_given = false;
  bool node_id_given = false;
  using setter = std::function<caf::error(const std::string&)>;
  auto millis = [](std::chrono::milliseconds& out, const char* flag) {
    return [&out, flag](const std::string& v) -> caf::error {
      auto n = parse_count(flag, v);
      if (!n) {
        return n.error();
      }
      out = std::chrono::milliseconds(*n);
      return {};
    };
  };
  std::map<std::string, setter> with_value = {
    {"--state-dir", [&](const std::string& v) -> caf::error {
       if (v.empty() || v.front() != '/') {
         return usage_error("--state-dir must be an absolute path, got \"" + v + "\"");
       }
       opts.state_dir = v;
       return {};
     }},
    {"--block-dir", [&](const std::string& v) -> caf::error {
       if (v.empty() || v.front() != '/') {
         return usage_error("--block-dir must be an absolute path, got \"" + v + "\"");
       }
       opts.block_dir = v;
       return {};
     }},
    {"--journal-reserve-mb", [&](const std::string& v) -> caf::error {
       auto n = parse_count("--journal-reserve-mb", v);
       if (!n || *n > 65536) {
         return usage_error("--journal-reserve-mb expects 0 to 65536 (MiB), got \"" + v + "\"");
       }
       opts.journal_reserve_mb = *n;
       return {};
     }},
    {"--docker-socket", [&](const std::string& v) { opts.docker_socket = v; return caf::error{}; }},
    {"--admin-socket", [&](const std::string& v) { opts.admin_socket = v; return caf::error{}; }},
    {"--metrics-address", [&](const std::string& v) -> caf::error {
       if (!v.empty()) {
         if (auto hp = parse_host_port(v); !hp) {
           return usage_error("--metrics-address: " + describe(hp.error())
                              + "; an empty value turns the endpoint off");
         }
       }
       opts.metrics_address = v;
       return {};
     }},
    {"--log-format", [&](const std::string& v) -> caf::error {
       if (v != "text" && v != "json") {
         return usage_error("--log-format must be text or json, got \"" + v + "\"");
       }
       opts.log_format = v;
       return {};
     }},
    {"--log-level", [&](const std::string& v) -> caf::error {
       if (v != "trace" && v != "debug" && v != "info" && v != "warn" && v != "error") {
         return usage_error("--log-level must be trace, debug, info, warn or error, got \"" + v
                            + "\"");
       }
       opts.log_level = v;
       return {};
     }},
    {"--import-ecs-state",
     [&](const std::string& v) { opts.import_ecs_state = v; return caf::error{}; }},
    {"--csi-endpoint", [&](const std::string& v) -> caf::error {
       if (!v.empty() && (v.rfind("unix:///", 0) != 0 || v.size() == 8)) {
         return usage_error("--csi-endpoint must be unix:///ABSOLUTE/PATH, got \"" + v + "\"");
       }
       opts.csi_endpoint = v;
       return {};
     }},
    {"--node-id", [&](const std::string& v) -> caf::error {
       if (v.empty() || v.size() > 128) {
         return usage_error("--node-id must be 1 to 128 characters, got \"" + v + "\"");
       }
       opts.node_id = v;
       return {};
     }},
    {"--csi-driver-name", [&](const std::string& v) -> caf::error {
       if (v.empty() || v.size() > 63) {
         return usage_error("--csi-driver-name must be 1 to 63 characters, got \"" + v + "\"");
       }
       opts.csi_driver_name = v;
       return {};
     }},
    {"--max-volumes-per-node", [&](const std::string& v) -> caf::error {
       auto n = parse_count("--max-volumes-per-node", v);
       if (!n) {
         return n.error();
       }
       opts.max_volumes_per_node = static_cast<int64_t>(*n);
       return {};
     }},
    {"--kubelet-dir", [&](const std::string& v) -> caf::error {
       if (v.empty() || v.front() != '/' || v == "/") {
         return usage_error("--kubelet-dir must be an absolute path other than /, got \"" + v
                            + "\"");
       }
       opts.kubelet_dir = v;
       return {};
     }},
    {"--backend-timeout-ms", millis(opts.backend_timeout, "--backend-timeout-ms")},
    {"--modify-cooldown-ms", millis(opts.modify_cooldown, "--modify-cooldown-ms")},
    {"--coalesce-window-ms", millis(opts.coalesce_window, "--coalesce-window-ms")},
    {"--stop-timeout-ms", millis(opts.stop_timeout, "--stop-timeout-ms")},
    {"--docker-api", [&](const std::string& v) -> caf::error {
       if (!v.empty()) {
         if (auto path = docker_engine::parse_api_url(v); !path) {
           return usage_error("--docker-api: " + describe(path.error())
                              + "; an empty value turns the reconciliation off");
         }
       }
       opts.docker_api = v;
       return {};
     }},
    {"--die-grace-ms", [&](const std::string& v) -> caf::error {
       auto n = parse_count("--die-grace-ms", v);
       if (!n || std::chrono::milliseconds(*n) > limits::max_die_grace) {
         return usage_error("--die-grace-ms expects 0 to "
                            + std::to_string(limits::max_die_grace.count())
                            + " (milliseconds), got \"" + v + "\"");
       }
       opts.die_grace = std::chrono::milliseconds(*n);
       return {};
     }},
    {"--executor-threads", [&](const std::string& v) -> caf::error {
       auto n = parse_count("--executor-threads", v);
       if (!n || *n == 0) {
         return usage_error("--executor-threads expects a number above 0, got \"" + v + "\"");
       }
       opts.executor_threads = *n;
       return {};
     }},
    {"--test-stall-volume",
     [&](const std::string& v) {
       // A comma-separated list: several volumes may stall at once.
       std::string::size_type start = 0;
       while (start <= v.size()) {
         auto comma = v.find(',', start);
         auto name = v.substr(start, comma == std::string::npos ? std::string::npos
                                                                 : comma - start);
         if (!name.empty()) {
           opts.test_stall_volumes.insert(name);
         }
         if (comma == std::string::npos) {
           break;
         }
         start = comma + 1;
       }
       return caf::error{};
     }},
    {"--test-stall-ms", millis(opts.test_stall, "--test-stall-ms")},
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      opts.help = true;
      continue;
    }
    if (arg == "--version") {
      opts.version = true;
      continue;
    }
    std::string value;
    bool inline_value = false;
    if (auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      inline_value = true;
    }
    auto it = with_value.find(arg);
    if (it == with_value.end()) {
      return usage_error("unknown option \"" + arg + "\"");
    }
    if (!inline_value) {
      if (i + 1 >= argc) {
        return usage_error(arg + " needs a value");
      }
      value = argv[++i];
    }
    if (auto err = it->second(value)) {
      return err;
    }
    csi_endpoint_given |= arg == "--csi-endpoint";
    node_id_given |= arg == "--node-id";
  }
  if (const char* env = std::getenv("CSI_ENDPOINT"); env != nullptr && !csi_endpoint_given) {
    if (auto err = with_value.at("--csi-endpoint")(env)) {
      return make_error(ec::invalid_argument, "CSI_ENDPOINT: " + describe(err));
    }
  }
  if (const char* env = std::getenv("NODE_ID"); env != nullptr && !node_id_given) {
    if (auto err = with_value.at("--node-id")(env)) {
      return make_error(ec::invalid_argument, "NODE_ID: " + describe(err));
    }
  }
  if (opts.node_id.empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) == 0) {
      opts.node_id = host;
    }
  }
  return opts;
}

} // namespace berth
