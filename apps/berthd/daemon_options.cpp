#include "apps/berthd/daemon_options.hpp"

#include <cstdlib>
#include <algorithm>
#include <functional>

#include <unistd.h>

#include "apps/cli/command_line.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "protocols/docker/engine/engine_url.hpp"
#include "protocols/http/tcp_http_server.hpp"

namespace berth {

namespace {

caf::error usage_error(const std::string& msg) {
  return make_error(ec::invalid_argument, msg + " (see berthd --help)");
}

using command_line::checker;
using command_line::in_quotes;

/// A count of at most 9 digits, or nothing.
bool parse_count(const std::string& value, size_t& out) {
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos
      || value.size() > 9) {
    return false;
  }
  out = static_cast<size_t>(std::stoul(value));
  return true;
}

std::string absolute_path(const std::string& v) {
  return !v.empty() && v.front() == '/' ? "" : "must be an absolute path, got " + in_quotes(v);
}

std::string node_id_problem(const std::string& v) {
  return !v.empty() && v.size() <= 128 ? "" : "must be 1 to 128 characters, got " + in_quotes(v);
}

/// The one table of berthd's options: it parses the command line and writes --help.
/// `opts` receives the values.
void describe_options(CLI::App& app, daemon_options& opts) {
  command_line::prepare(app, 30);
  auto value = [&app](const std::string& flag, const std::string& text, const std::string& help,
                      checker check, command_line::storer store) {
    command_line::value(app, flag, text, help, std::move(check), std::move(store));
  };
  auto any = [](const std::string&) { return std::string{}; };
  auto into = [](std::string& out) { return [&out](const std::string& v) { out = v; }; };
  // A count from min to max; `what` says the range.
  auto count = [](size_t min, size_t max, const std::string& what) -> checker {
    return [=](const std::string& v) {
      size_t n = 0;
      return parse_count(v, n) && n >= min && n <= max
               ? std::string{}
               : "expects " + what + ", got " + in_quotes(v);
    };
  };
  auto number = count(0, 999999999, "a non-negative number");
  auto millis = [](std::chrono::milliseconds& out) {
    return [&out](const std::string& v) { out = std::chrono::milliseconds(std::stoul(v)); };
  };

  value("--state-dir", "DIR", "state and volumes live here (default /var/lib/berth)",
        absolute_path, into(opts.state_dir));
  value("--block-dir", "DIR",
        "block images live here; put it on another filesystem than\n"
        "the state so thin images cannot fill the journal's\n(default STATE/block)",
        absolute_path, into(opts.block_dir));
  value("--journal-reserve-mb", "N",
        "preallocated room (STATE/state/reserve) that keeps the\n"
        "journal and compaction working on a full filesystem;\n0 turns it off (default 32)",
        count(0, 65536, "0 to 65536 (MiB)"),
        [&](const std::string& v) { opts.journal_reserve_mb = std::stoul(v); });
  value("--compact-after-mb", "N",
        "write a snapshot and start a new journal once the journal\n"
        "passes N MiB; commits go on meanwhile (default 64)",
        count(1, 1048576, "1 to 1048576 (MiB)"),
        [&](const std::string& v) { opts.compact_after_mb = std::stoul(v); });
  value("--docker-socket", "PATH",
        "Docker plugin socket; empty turns it off\n(default /run/docker/plugins/berth.sock)", any,
        into(opts.docker_socket));
  value("--admin-socket", "PATH",
        "berthctl socket; empty turns it off (default " + opts.admin_socket + ")", any,
        into(opts.admin_socket));
  value("--metrics-address", "HOST:PORT",
        "serve /metrics (Prometheus), /healthz and /readyz on\n"
        "this TCP address; port 0 takes any free port (logged);\n"
        "empty turns it off (default 127.0.0.1:9808)",
        [](const std::string& v) {
          if (v.empty()) {
            return std::string{};
          }
          auto hp = parse_host_port(v);
          return hp ? std::string{}
                    : ": " + describe(hp.error()) + "; an empty value turns the endpoint off";
        },
        into(opts.metrics_address));
  value("--log-format", "text|json", "log line format (default text)", log_format_check(),
        into(opts.log_format));
  value("--log-level", "LEVEL", "trace, debug, info, warn, error (default info)",
        log_level_check(), into(opts.log_level));
  value("--import-ecs-state", "FILE",
        "import an amazon-ecs-volume-plugin state file when the\n"
        "berth state is empty (replacing that plugin on a host)",
        any, into(opts.import_ecs_state));
  value("--csi-endpoint", "unix:///PATH",
        "serve CSI (Identity, Controller, Node) on this socket;\n"
        "empty turns CSI off (default $CSI_ENDPOINT, else off)",
        csi_endpoint_problem, into(opts.csi_endpoint));
  value("--node-id", "ID", "CSI node ID (default $NODE_ID, else the hostname)", node_id_problem,
        into(opts.node_id));
  app.add_flag("--kubernetes", opts.kubernetes,
               "cluster mode: serve CSI Identity and Node only, and carry\n"
               "out this node's BerthVolumes (--node-id is the Node's name);\n"
               "`berthd controller` serves the Controller");
  value("--kubeconfig", "FILE",
        "with --kubernetes, reach the API through this kubeconfig\n"
        "(default: in-cluster, the pod's service account)",
        [](const std::string& v) { return v.empty() ? std::string{"must not be empty"} : std::string{}; },
        into(opts.kubeconfig));
  value("--csi-driver-name", "NAME", "CSI plugin name (default berth.csi.dev)",
        [](const std::string& v) {
          return !v.empty() && v.size() <= 63 ? "" : "must be 1 to 63 characters, got " + in_quotes(v);
        },
        into(opts.csi_driver_name));
  value("--csi-capabilities", "1.12|1.9", csi_capabilities_help, csi_capabilities_problem,
        into(opts.csi_capabilities));
  value("--max-volumes-per-node", "N", "NodeGetInfo's limit; 0 = none (default 0)", number,
        [&](const std::string& v) { opts.max_volumes_per_node = std::stoll(v); });
  value("--kubelet-dir", "DIR",
        "CSI staging and target paths must lie below DIR, after\n"
        "resolving symlinks; others are refused (default /var/lib/kubelet)",
        [](const std::string& v) {
          return !v.empty() && v.front() == '/' && v != "/"
                   ? ""
                   : "must be an absolute path other than /, got " + in_quotes(v);
        },
        into(opts.kubelet_dir));
  value("--backend-timeout-ms", "N",
        "a mount/unmount that takes longer fails (unmount falls\n"
        "back to a lazy detach) (default 30000)",
        number, millis(opts.backend_timeout));
  value("--coalesce-window-ms", "N",
        "expand and modify requests for one volume that arrive within\n"
        "N ms of the first are merged into one backend modification;\n"
        "0 = each is its own (default 2000)",
        number, millis(opts.coalesce_window));
  value("--modify-cooldown-ms", "N",
        "a volume may be modified (resized, its mutable parameters\n"
        "changed) once per N ms, counted from the last modification\n"
        "that succeeded; an earlier one is refused (RESOURCE_EXHAUSTED)\n"
        "naming when to retry; 0 = no limit (default 0)",
        number, millis(opts.modify_cooldown));
  value("--docker-api", "unix:///PATH",
        "dockerd's Engine API: berth releases the counts of Docker\n"
        "mount IDs that dockerd will never Unmount (a crashed dockerd,\n"
        "a destroyed container); empty turns it off\n(default unix:///var/run/docker.sock)",
        [](const std::string& v) {
          if (v.empty()) {
            return std::string{};
          }
          auto path = docker_engine::parse_api_url(v);
          return path ? std::string{}
                      : ": " + describe(path.error())
                          + "; an empty value turns the reconciliation off";
        },
        into(opts.docker_api));
  auto max_grace = static_cast<size_t>(limits::max_die_grace.count());
  value("--die-grace-ms", "N",
        "after a container's die event, how long dockerd may still\n"
        "Unmount its IDs before berth releases them (default 10000,\nat most "
          + std::to_string(max_grace) + ")",
        count(0, max_grace, "0 to " + std::to_string(max_grace) + " (milliseconds)"),
        millis(opts.die_grace));
  value("--stop-timeout-ms", "N",
        "on SIGTERM, wait this long for in-flight requests (default 30000)", number,
        millis(opts.stop_timeout));
  value("--executor-threads", "N", "threads for blocking backend calls (default 16)",
        count(1, 999999999, "a number above 0"),
        [&](const std::string& v) { opts.executor_threads = std::stoul(v); });
  value("--usage-series", "N",
        "measure and export the used bytes of at most N mounted block\n"
        "volumes (the first by name; one statvfs each); 0 = none\n(default 1000)",
        count(0, 1000000, "0 to 1000000"),
        [&](const std::string& v) { opts.usage_series = std::stoul(v); });
  value("--usage-interval-ms", "N", "time between two samples of the used bytes (default 15000)",
        count(100, 3600000, "100 to 3600000 (milliseconds)"), millis(opts.usage_interval));
  value("--health-interval-ms", "N",
        "time between two looks at every volume's health (default 10000)",
        count(100, 3600000, "100 to 3600000 (milliseconds)"), millis(opts.health_interval));
  value("--test-stall-volume", "NAMES",
        "TEST ONLY: stall these volumes' backend calls (a,b,...)", any,
        [&](const std::string& v) {
          // A comma-separated list: several volumes may stall at once.
          std::string::size_type start = 0;
          while (start <= v.size()) {
            auto comma = v.find(',', start);
            auto name =
              v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            if (!name.empty()) {
              opts.test_stall_volumes.insert(name);
            }
            if (comma == std::string::npos) {
              break;
            }
            start = comma + 1;
          }
        });
  value("--test-stall-ms", "N", "TEST ONLY: by this many milliseconds", number,
        millis(opts.test_stall));
  app.add_flag("--help,-h", opts.help, "this text");
  app.add_flag("--version", opts.version, "the version");
}

/// The app describe_options fills, named and described as --help shows it.
struct daemon_app {
  CLI::App app{"berthd - durable volumes for containers (Docker volume plugin, CSI driver)",
               "berthd"};
  explicit daemon_app(daemon_options& opts) { describe_options(app, opts); }
};

} // namespace

std::string csi_endpoint_problem(const std::string& v) {
  return v.empty() || (v.rfind("unix:///", 0) == 0 && v.size() > 8)
           ? ""
           : "must be unix:///ABSOLUTE/PATH, got " + in_quotes(v);
}

std::string csi_capabilities_problem(const std::string& v) {
  return v == "1.12" || v == "1.9" ? "" : "must be 1.12 or 1.9, got " + in_quotes(v);
}

command_line::checker log_format_check() {
  return [](const std::string& v) {
    return v == "text" || v == "json" ? "" : "must be text or json, got " + in_quotes(v);
  };
}

command_line::checker log_level_check() {
  return [](const std::string& v) {
    for (const char* level : {"trace", "debug", "info", "warn", "error"}) {
      if (v == level) {
        return std::string{};
      }
    }
    return "must be trace, debug, info, warn or error, got " + in_quotes(v);
  };
}

std::string daemon_usage() {
  daemon_options opts;
  daemon_app d{opts};
  return d.app.help();
}

caf::expected<daemon_options> parse_daemon_options(int argc, const char* const* argv) {
  daemon_options opts;
  daemon_app d{opts};
  try {
    d.app.parse(command_line::for_cli11({argv + std::min(argc, 1), argv + argc}));
  } catch (const CLI::ParseError& e) {
    return usage_error(command_line::message(d.app, e));
  }
  // The CSI sidecars' convention: the environment fills what the command line left out.
  struct fallback {
    const char* var;
    const char* flag;
    checker check;
    std::string& out;
  };
  for (const auto& f : {fallback{"CSI_ENDPOINT", "--csi-endpoint", csi_endpoint_problem,
                                 opts.csi_endpoint},
                        fallback{"NODE_ID", "--node-id", node_id_problem, opts.node_id}}) {
    const char* env = std::getenv(f.var);
    if (env == nullptr || d.app.get_option(f.flag)->count() > 0) {
      continue;
    }
    if (auto problem = f.check(env); !problem.empty()) {
      return make_error(ec::invalid_argument, std::string{f.var} + ": " + f.flag + " " + problem
                                                + " (see berthd --help)");
    }
    f.out = env;
  }
  if (opts.kubernetes && opts.csi_endpoint.empty() && !opts.help) {
    return usage_error("--kubernetes needs --csi-endpoint (or CSI_ENDPOINT): the node serves "
                       "CSI Node to kubelet");
  }
  if (!opts.kubeconfig.empty() && !opts.kubernetes) {
    return usage_error("--kubeconfig is for --kubernetes; pass both, or neither");
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
