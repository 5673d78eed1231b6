// berth-bench's command line. Over 400 lines because it is one CLI11 table of every mode
// and flag, which both parses and writes --help: split, --help would no longer be one list.

#include "apps/bench/bench_args.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>

#include <CLI/CLI.hpp>

#include "apps/cli/command_line.hpp"
#include "core/defaults.hpp"

namespace berth::bench {

namespace {

/// A usage error whose message is the whole of what berth-bench prints.
struct usage_failure : CLI::ParseError {
  explicit usage_failure(const std::string& msg)
    : CLI::ParseError("usage", msg, CLI::ExitCodes::ValidationError) {}
};

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

/// Adds one mode's flags to `sub`, each with the check of its value.
class flags {
public:
  explicit flags(CLI::App* sub) : sub_(sub) {}

  void text(const std::string& flag, const std::string& name, const std::string& help,
            std::string& out) {
    sub_->add_option_function<std::string>(flag, [&out](const std::string& v) { out = v; }, help)
      ->option_text(name);
  }
  /// An integer >= min (and <= max, when there is one: then the message names both).
  void integer(const std::string& flag, const std::string& name, const std::string& help,
               long& out, long min, long max = LONG_MAX) {
    sub_
      ->add_option_function<std::string>(
        flag,
        [&out, flag, min, max](const std::string& v) {
          auto n = to_long(v, min, max);
          if (!n) {
            throw usage_failure(max == LONG_MAX
                                  ? flag + " needs an integer >= " + std::to_string(min)
                                      + ", got '" + v + "'"
                                  : flag + " needs an integer from " + std::to_string(min)
                                      + " to " + std::to_string(max) + ", got '" + v + "'");
          }
          out = *n;
        },
        help)
      ->option_text(name);
  }
  void positive(const std::string& flag, const std::string& name, const std::string& help,
                double& out) {
    sub_
      ->add_option_function<std::string>(
        flag,
        [&out, flag](const std::string& v) {
          char* end = nullptr;
          double d = std::strtod(v.c_str(), &end);
          if (end == v.c_str() || *end != '\0' || !(d > 0)) {
            throw usage_failure(flag + " needs a positive number, got '" + v + "'");
          }
          out = d;
        },
        help)
      ->option_text(name);
  }

private:
  CLI::App* sub_;
};

/// The one table of berth-bench's modes and flags: it parses and writes --help.
void describe_options(CLI::App& app, bench_args& a) {
  app.set_help_flag();
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.option_defaults()->disable_flag_override(); // --keep=no is no --keep
  app.get_formatter()->column_width(26);
  app.require_subcommand(0, 1);
  app.fallthrough();
  app.allow_extras(); // parse_bench_args names what is left over
  app.footer("The last line of the output is one JSON object.");

  auto* docker = app.add_subcommand(
    "docker", "Creates the volumes P-0..P-(N-1) that are missing, then C clients do\n"
              "Mount(fresh ID)+Unmount for S seconds; --stalled NAME adds one client\n"
              "looping on NAME, reported apart; --pid reports that process's RSS.");
  flags d{docker};
  d.text("--socket", "PATH", "berthd's Docker plugin socket (required)", a.common.socket);
  d.integer("--volumes", "N", "volumes (required)", a.common.volumes, 1);
  d.integer("--concurrency", "C", "clients (required)", a.common.concurrency, 1);
  d.positive("--seconds", "S", "how long (required)", a.common.seconds);
  d.integer("--pid", "PID", "berthd's pid, for its RSS (default none)", a.common.pid, 1);
  d.text("--prefix", "P", "volume names start with P- (default bench)", a.common.prefix);
  d.text("--stalled", "NAME", "one more client loops on this volume", a.common.stalled);
  d.positive("--report-every", "SECONDS",
             "also print, every SECONDS, the interval's pairs/s and\n"
             "latencies and berthd's RSS, fds and threads (--pid) and\n"
             "journal size (--state-dir) (default: only at the end)",
             a.common.docker.report_every);
  d.text("--state-dir", "DIR", "berthd's --state-dir, for the journal size", a.common.state_dir);
  docker->add_flag("--mixed", a.common.docker.mixed,
                   "every 32nd round of each client also Creates and\nRemoves a fresh volume");
  d.integer("--lists", "N",
            "once the pairs end, time N VolumeDriver.List calls\n"
            "one after another (default 0)",
            a.common.docker.lists, 0);

  auto* restart = app.add_subcommand(
    "restart", "Populates DIR with N volumes mounted by K IDs each (when it holds fewer),\n"
               "restarts berthd and times exec -> first VolumeDriver.List reply; then\n"
               "unmounts and removes everything unless --keep.");
  flags r{restart};
  r.text("--berthd", "PATH", "the berthd binary to start (required)", a.common.berthd);
  r.text("--state-dir", "DIR", "berthd's --state-dir (required)", a.common.state_dir);
  r.text("--socket", "PATH", "berthd's Docker plugin socket (required)", a.common.socket);
  r.integer("--volumes", "N", "volumes (required)", a.common.volumes, 1);
  r.integer("--ids-per-volume", "K", "mount IDs per volume (required)", a.common.ids_per_volume,
            0);
  r.integer("--concurrency", "C", "clients that populate (default 16)", a.common.concurrency, 1);
  r.text("--prefix", "P", "volume names start with P- (default bench)", a.common.prefix);
  restart->add_flag("--keep", a.common.keep, "keep the volumes and their mounts");
  restart->add_option("--berthd-arg", a.common.berthd_args, "one more argument for berthd")
    ->option_text("ARG...")
    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  auto* csi = app.add_subcommand(
    "csi", "C clients do CreateVolume+DeleteVolume for S seconds; then each stages\n"
           "one volume and does NodePublish(fresh target)+NodeUnpublish for S\n"
           "seconds. Staging dirs and targets go in a fresh dir below DIR.");
  flags c{csi};
  c.text("--endpoint", "unix:///PATH", "berthd's CSI socket (required)", a.csi.endpoint);
  c.text("--node-endpoint", "unix:///PATH",
         "where the Node calls go (default --endpoint); with\n"
         "--endpoint at berthd controller, a node's CSI socket",
         a.csi.node_endpoint);
  c.integer("--concurrency", "C", "clients (required)", a.csi.concurrency, 1);
  c.positive("--seconds", "S", "how long each phase runs (required)", a.csi.seconds);
  c.integer("--pid", "PID", "berthd's pid, for its RSS (default none)", a.csi.pid, 1);
  c.text("--prefix", "P", "volume names start with P (default bench)", a.csi.prefix);
  c.text("--backend", "NAME",
         "the StorageClass parameter backend (default block; the\n"
         "publish phase needs a backend that stages, i.e. block)",
         a.csi.backend);
  c.text("--work-dir", "DIR", "below which staging dirs and targets go (default /tmp)",
         a.csi.work_dir);
  csi->add_flag("--one-volume", a.csi.one_volume,
                "the publish phase stages one volume, which every client\n"
                "publishes to its own targets (default: one volume per client)");

  auto* list =
    app.add_subcommand("csi-list",
                       "C clients create V volumes; then one client times L ListVolumes\n"
                       "calls, each the whole list, one after another; then the volumes are\n"
                       "deleted.");
  flags l{list};
  l.text("--endpoint", "unix:///PATH", "berthd's CSI socket (required)", a.list.endpoint);
  l.integer("--volumes", "V", "volumes made before the lists (required)", a.list.volumes, 1,
            1000000);
  l.integer("--lists", "L", "ListVolumes calls timed (default 100)", a.list.lists, 1, 1000000);
  l.integer("--concurrency", "C", "clients that create and delete (default 16)", a.list.concurrency,
            1, 4096);
  l.text("--backend", "NAME", "the StorageClass parameter backend (default local)", a.list.backend);
  l.text("--prefix", "P", "volume names start with P-list-PID- (default bench)", a.list.prefix);
  l.integer("--pid", "PID", "berthd's pid, for its RSS (default none)", a.list.pid, 1);

  auto* burst = app.add_subcommand(
    "csi-burst", "Creates one block volume, then for R rounds releases K clients at once:\n"
                 "even ones ControllerExpandVolume (all to the same size, --step-mb more\n"
                 "each round), odd ones ControllerModifyVolume (KEY, one value per round).\n"
                 "Backend calls per burst come from the volume's \"modifications\" in\n"
                 "berthd's admin API.");
  flags b{burst};
  b.text("--endpoint", "unix:///PATH", "berthd's CSI socket (required)", a.burst.endpoint);
  b.integer("--clients", "K", "requests per burst, sent at once (required)", a.burst.clients, 1,
            4096);
  b.integer("--rounds", "R", "bursts (default 5)", a.burst.rounds, 1, 100000);
  b.text("--admin-socket", "PATH",
         std::string{"berthd's admin socket (default "} + defaults::admin_socket + ")",
         a.burst.admin_socket);
  b.text("--prefix", "P", "the volume is P-burst-PID (default bench)", a.burst.prefix);
  b.integer("--size-mb", "N", "the volume's size at creation, MiB (default 1024)",
            a.burst.size_mb, 1, 1L << 30);
  b.integer("--step-mb", "N", "each round's expand asks this much more (default 64)",
            a.burst.step_mb, 1, 1L << 20);
  b.text("--parameter", "KEY", "the mutable parameter the modifies set (default readAheadKB)",
         a.burst.parameter);

  auto* io = app.add_subcommand(
    "io", "fio in a CSI block volume (staged and published below --work-dir), a\n"
          "Docker block volume and a host directory, each job --rounds times in a\n"
          "rotating order; medians, and each volume against the host.");
  flags i{io};
  i.text("--endpoint", "unix:///PATH", "berthd's CSI socket (default: no CSI volume)",
         a.io.endpoint);
  i.text("--socket", "PATH", "berthd's Docker plugin socket (default: no Docker volume)",
         a.io.socket);
  i.text("--host-dir", "DIR", "the host directory measured beside them (required)",
         a.io.host_dir);
  i.text("--work-dir", "DIR", "below which the CSI staging dir and target go (default /tmp)",
         a.io.work_dir);
  i.text("--fs", "TYPE", "the volumes' filesystem, xfs or ext4 (default xfs)", a.io.fs_type);
  i.integer("--size-mb", "N", "each volume's size, MiB (default 4096)", a.io.size_mb, 1536,
            1L << 30);
  i.positive("--runtime", "S", "seconds of each timed fio run (default 10)", a.io.runtime);
  i.integer("--rounds", "R", "runs of each job in each target (default 3)", a.io.rounds, 1, 1000);
  i.text("--fio", "PATH", "the fio binary (default fio)", a.io.fio);
  i.text("--prefix", "P", "volume names start with P (default bench)", a.io.prefix);
  io->add_option("--job", a.io.jobs, "only this job (fsync, fsync-over, seqw, seqr, randw,\n"
                                     "randr, cache, dio); again for more (default every one)")
    ->option_text("NAME...")
    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  app.add_subcommand("help", "the same as --help")->group("");
  app.add_flag("--help,-h", a.help, "this text");
  app.add_flag("--version", a.version, "berth-bench's version");
}

/// The app describe_options fills.
struct bench_app {
  CLI::App app{"berth-bench - load generator for berthd's Docker volume plugin and CSI sockets",
               "berth-bench"};
  explicit bench_app(bench_args& a) {
    a.burst.admin_socket = defaults::admin_socket;
    describe_options(app, a);
  }
};

/// The arguments as CLI11 should see them, last first (the order its parse takes): a
/// flag's value is always the next argument, as berth-bench always took it, even one
/// that starts with "--" (--berthd-arg --metrics-address=...); so `--flag VALUE` is
/// passed as `--flag=VALUE`, and an empty VALUE apart.
std::vector<std::string> for_cli11(const std::vector<std::string>& args) {
  std::vector<std::string> in;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& arg = args[i];
    bool takes_value = arg.size() > 2 && arg.rfind("--", 0) == 0
                       && arg.find('=') == std::string::npos && arg != "--keep" && arg != "--mixed"
                       && arg != "--help" && arg != "--version";
    if (takes_value && i + 1 < args.size()) {
      const auto& value = args[++i];
      if (value.empty()) {
        in.push_back(arg);
        in.emplace_back();
      } else {
        in.push_back(arg + "=" + value);
      }
    } else {
      in.push_back(arg);
    }
  }
  return {in.rbegin(), in.rend()};
}

/// A bare absolute path is taken as unix://PATH; anything else but unix: is refused.
std::optional<std::string> unix_endpoint(std::string& endpoint, const char* flag = "--endpoint") {
  if (endpoint.empty()) {
    return std::string{flag} + " is required (unix:///PATH)";
  }
  if (endpoint.rfind("unix:", 0) != 0) {
    if (endpoint.front() != '/') {
      return std::string{flag} + " must be unix:///PATH, got '" + endpoint + "'";
    }
    endpoint = "unix://" + endpoint;
  }
  return std::nullopt;
}

} // namespace

std::string bench_usage() {
  bench_args a;
  bench_app b{a};
  return b.app.help("", CLI::AppFormatMode::All);
}

std::optional<std::string> parse_bench_args(const std::vector<std::string>& args,
                                            bench_args& out) {
  bench_args a;
  bench_app b{a};
  try {
    b.app.parse(for_cli11(args));
  } catch (const usage_failure& e) {
    return std::string{e.what()};
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (auto refusal = command_line::switch_given_a_value(what); !refusal.empty()) {
      return refusal;
    }
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr
        && what.find(" required ") != std::string::npos) {
      return what.substr(0, what.find(':')) + " needs a value";
    }
    return what;
  }
  auto subs = b.app.get_subcommands();
  if (auto extra = b.app.remaining(true); !extra.empty()) {
    const auto& first = extra.front();
    if (first.rfind("-", 0) == 0) {
      return "unknown option '" + first.substr(0, first.find('=')) + "'";
    }
    return subs.empty() ? "unknown mode '" + first + "'" : "unexpected '" + first + "'";
  }
  if (!subs.empty() && subs.front()->get_name() == "help") {
    a.help = true;
  }
  if (a.help || a.version) {
    out = a;
    return std::nullopt;
  }
  if (subs.empty()) {
    return std::string{"missing mode (docker, restart, csi, csi-list, csi-burst or io)"};
  }
  auto* sub = subs.front();
  a.mode = sub->get_name();
  auto given = [sub](const char* flag) { return sub->get_option(flag)->count() > 0; };
  if (a.mode == "csi-burst") {
    if (auto err = unix_endpoint(a.burst.endpoint)) {
      return err;
    }
    if (!given("--clients")) {
      return std::string{"csi-burst mode needs --clients"};
    }
    for (const auto& [flag, value] :
         {std::pair<const char*, const std::string*>{"--admin-socket", &a.burst.admin_socket},
          {"--prefix", &a.burst.prefix},
          {"--parameter", &a.burst.parameter}}) {
      if (value->empty()) {
        return std::string{flag} + " must not be empty";
      }
    }
  } else if (a.mode == "csi-list") {
    if (auto err = unix_endpoint(a.list.endpoint)) {
      return err;
    }
    if (!given("--volumes")) {
      return std::string{"csi-list mode needs --volumes"};
    }
    if (a.list.prefix.empty() || a.list.backend.empty()) {
      return std::string{"--prefix and --backend must not be empty"};
    }
  } else if (a.mode == "io") {
    if (!a.io.endpoint.empty()) {
      if (auto err = unix_endpoint(a.io.endpoint)) {
        return err;
      }
    }
    if (a.io.endpoint.empty() && a.io.socket.empty()) {
      return std::string{"io mode needs --endpoint, --socket or both"};
    }
    if (a.io.host_dir.empty()) {
      return std::string{"io mode needs --host-dir"};
    }
    if (a.io.fs_type != "xfs" && a.io.fs_type != "ext4") {
      return "--fs takes xfs or ext4, got '" + a.io.fs_type + "'";
    }
    for (const auto& j : a.io.jobs) {
      const auto& known = io_job_names();
      if (std::find(known.begin(), known.end(), j) == known.end()) {
        return "--job takes fsync, fsync-over, seqw, seqr, randw, randr, cache or dio, got '" + j
               + "'";
      }
    }
    if (a.io.prefix.empty()) {
      return std::string{"--prefix must not be empty"};
    }
  } else if (a.mode == "csi") {
    if (auto err = unix_endpoint(a.csi.endpoint)) {
      return err;
    }
    if (!given("--node-endpoint")) {
      a.csi.node_endpoint = a.csi.endpoint;
    } else if (auto err = unix_endpoint(a.csi.node_endpoint, "--node-endpoint")) {
      return err;
    }
    if (a.csi.prefix.empty()) {
      return std::string{"--prefix must not be empty"};
    }
    if (!given("--concurrency") || !given("--seconds")) {
      return std::string{"csi mode needs --concurrency and --seconds"};
    }
  } else {
    a.common.mode = a.mode;
    if (a.common.socket.empty()) {
      return std::string{"--socket is required"};
    }
    if (a.common.prefix.empty()) {
      return std::string{"--prefix must not be empty"};
    }
    if (a.mode == "docker") {
      if (!given("--volumes") || !given("--concurrency") || !given("--seconds")) {
        return std::string{"docker mode needs --volumes, --concurrency and --seconds"};
      }
    } else {
      if (a.common.berthd.empty() || a.common.state_dir.empty() || !given("--volumes")
          || !given("--ids-per-volume")) {
        return std::string{
          "restart mode needs --berthd, --state-dir, --volumes and --ids-per-volume"};
      }
      if (!given("--concurrency")) {
        a.common.concurrency = 16;
      }
    }
  }
  out = a;
  return std::nullopt;
}

std::optional<std::string> parse_burst_args(const std::vector<std::string>& args,
                                            burst_options& out) {
  std::vector<std::string> all{"csi-burst"};
  all.insert(all.end(), args.begin(), args.end());
  bench_args a;
  auto err = parse_bench_args(all, a);
  if (!err) {
    out = a.burst;
    out.help = a.help;
  }
  return err;
}

} // namespace berth::bench
