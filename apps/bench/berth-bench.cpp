// berth-bench: load generator for berthd's Docker volume plugin and CSI sockets.
// Prints readable lines, then one JSON object as the last line.

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "apps/bench/common.hpp"
#include "apps/bench/csi_burst.hpp"
#include "apps/bench/csi_mode.hpp"

namespace {

const char* usage_text =
  "usage:\n"
  "  berth-bench docker --socket PATH --volumes N --concurrency C --seconds S\n"
  "                     [--pid PID] [--prefix P] [--stalled NAME]\n"
  "      Creates the volumes P-0..P-(N-1) that are missing, then C clients do\n"
  "      Mount(fresh ID)+Unmount for S seconds; --stalled NAME adds one client\n"
  "      looping on NAME, reported apart; --pid reports that process's RSS.\n"
  "  berth-bench restart --berthd PATH --state-dir DIR --socket PATH --volumes N\n"
  "                      --ids-per-volume K [--concurrency C] [--prefix P] [--keep]\n"
  "                      [--berthd-arg ARG]...\n"
  "      Populates DIR with N volumes mounted by K IDs each (when it holds fewer),\n"
  "      restarts berthd and times exec -> first VolumeDriver.List reply; then\n"
  "      unmounts and removes everything unless --keep.\n"
  "  berth-bench csi --endpoint unix:///PATH --concurrency C --seconds S [--pid PID]\n"
  "                  [--prefix P] [--backend NAME] [--work-dir DIR]\n"
  "      C clients do CreateVolume+DeleteVolume for S seconds; then each stages\n"
  "      one volume and does NodePublish(fresh target)+NodeUnpublish for S\n"
  "      seconds. Staging dirs and targets go in a fresh dir below DIR (/tmp).\n"
  "      --backend sets the StorageClass parameter backend (default block; the\n"
  "      publish phase needs a backend that stages, i.e. block).\n"
  "  berth-bench csi-burst --endpoint unix:///PATH --clients K [--rounds R]\n"
  "                        [--admin-socket PATH] [--prefix P] [--size-mb N]\n"
  "                        [--step-mb N] [--parameter KEY]\n"
  "      Creates one block volume (N MiB, default 1024), then for R rounds\n"
  "      (default 5) releases K clients at once: even ones ControllerExpandVolume\n"
  "      (all to the same size, --step-mb more each round, default 64), odd ones\n"
  "      ControllerModifyVolume (KEY, default readAheadKB, one value per round).\n"
  "      Backend calls per burst come from the volume's \"modifications\" in\n"
  "      berthd's admin API (--admin-socket, default /run/berth/admin.sock).\n"
  "The last line of the output is one JSON object.\n";

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "berth-bench: %s (see berth-bench --help)\n", msg.c_str());
  std::exit(64);
}

long to_long(const std::string& flag, const char* value, long min) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || v < min) {
    usage_error(flag + " needs an integer >= " + std::to_string(min) + ", got '" + value + "'");
  }
  return v;
}

double to_double(const std::string& flag, const char* value) {
  char* end = nullptr;
  double v = std::strtod(value, &end);
  if (end == value || *end != '\0' || !(v > 0)) {
    usage_error(flag + " needs a positive number, got '" + value + "'");
  }
  return v;
}

/// Walks argv[2..] as `--flag VALUE` pairs and calls `on(flag, value)`; a flag named
/// in `switches` takes no value (value ""). `on` returns false for an unknown flag.
/// Returns false when --help was asked (usage printed).
template <class OnFlag>
bool parse_flags(int argc, char** argv, std::initializer_list<std::string> switches,
                 OnFlag on) {
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf("%s", usage_text);
      return false;
    }
    const char* value = "";
    if (std::find(switches.begin(), switches.end(), flag) == switches.end()) {
      if (i + 1 >= argc) {
        usage_error(flag.rfind("--", 0) == 0 ? flag + " needs a value"
                                             : "unexpected '" + flag + "'");
      }
      value = argv[++i];
    }
    if (!on(flag, value)) {
      usage_error("unknown option '" + flag + "'");
    }
  }
  return true;
}

/// `berth-bench csi-burst ...`: its own flags (argv[2..]), parsed by parse_burst_args.
int csi_burst_main(int argc, char** argv) {
  berth::bench::burst_options opt;
  if (auto err = berth::bench::parse_burst_args({argv + 2, argv + argc}, opt)) {
    usage_error(*err);
  }
  if (opt.help) {
    std::printf("%s", usage_text);
    return 0;
  }
  return berth::bench::run_csi_burst(opt);
}

/// `berth-bench csi ...`: its own flags (argv[2..]).
int csi_main(int argc, char** argv) {
  berth::bench::csi_options opt;
  bool have_concurrency = false;
  bool have_seconds = false;
  bool go_on = parse_flags(argc, argv, {}, [&](const std::string& flag, const char* value) {
    if (flag == "--endpoint") {
      opt.endpoint = value;
    } else if (flag == "--concurrency") {
      opt.concurrency = to_long(flag, value, 1);
      have_concurrency = true;
    } else if (flag == "--seconds") {
      opt.seconds = to_double(flag, value);
      have_seconds = true;
    } else if (flag == "--pid") {
      opt.pid = to_long(flag, value, 1);
    } else if (flag == "--prefix") {
      opt.prefix = value;
    } else if (flag == "--backend") {
      opt.backend = value;
    } else if (flag == "--work-dir") {
      opt.work_dir = value;
    } else {
      return false;
    }
    return true;
  });
  if (!go_on) {
    return 0;
  }
  if (opt.endpoint.empty()) {
    usage_error("--endpoint is required (unix:///PATH)");
  }
  if (opt.endpoint.rfind("unix:", 0) != 0) {
    if (opt.endpoint.front() != '/') {
      usage_error("--endpoint must be unix:///PATH, got '" + opt.endpoint + "'");
    }
    opt.endpoint = "unix://" + opt.endpoint;
  }
  if (opt.prefix.empty()) {
    usage_error("--prefix must not be empty");
  }
  if (!have_concurrency || !have_seconds) {
    usage_error("csi mode needs --concurrency and --seconds");
  }
  return berth::bench::run_csi(opt);
}

} // namespace

int main(int argc, char** argv) {
  using berth::bench::options;
  if (argc < 2) {
    usage_error("missing mode (docker, restart, csi or csi-burst)");
  }
  std::string mode = argv[1];
  if (mode == "--help" || mode == "-h" || mode == "help") {
    std::printf("%s", usage_text);
    return 0;
  }
  if (mode == "csi") {
    return csi_main(argc, argv);
  }
  if (mode == "csi-burst") {
    return csi_burst_main(argc, argv);
  }
  if (mode != "docker" && mode != "restart") {
    usage_error("unknown mode '" + mode + "'");
  }
  options opt;
  opt.mode = mode;
  bool have_volumes = false;
  bool have_concurrency = false;
  bool have_seconds = false;
  bool have_ids = false;
  auto on_flag = [&](const std::string& flag, const char* value) {
    if (flag == "--keep") {
      opt.keep = true;
    } else if (flag == "--socket") {
      opt.socket = value;
    } else if (flag == "--volumes") {
      opt.volumes = to_long(flag, value, 1);
      have_volumes = true;
    } else if (flag == "--concurrency") {
      opt.concurrency = to_long(flag, value, 1);
      have_concurrency = true;
    } else if (flag == "--seconds") {
      opt.seconds = to_double(flag, value);
      have_seconds = true;
    } else if (flag == "--pid") {
      opt.pid = to_long(flag, value, 1);
    } else if (flag == "--prefix") {
      opt.prefix = value;
    } else if (flag == "--stalled") {
      opt.stalled = value;
    } else if (flag == "--berthd") {
      opt.berthd = value;
    } else if (flag == "--state-dir") {
      opt.state_dir = value;
    } else if (flag == "--ids-per-volume") {
      opt.ids_per_volume = to_long(flag, value, 0);
      have_ids = true;
    } else if (flag == "--berthd-arg") {
      opt.berthd_args.emplace_back(value);
    } else {
      return false;
    }
    return true;
  };
  if (!parse_flags(argc, argv, {"--keep"}, on_flag)) {
    return 0;
  }
  if (opt.socket.empty()) {
    usage_error("--socket is required");
  }
  if (opt.prefix.empty()) {
    usage_error("--prefix must not be empty");
  }
  if (mode == "docker") {
    if (!have_volumes || !have_concurrency || !have_seconds) {
      usage_error("docker mode needs --volumes, --concurrency and --seconds");
    }
    return berth::bench::run_docker(opt);
  }
  if (opt.berthd.empty() || opt.state_dir.empty() || !have_volumes || !have_ids) {
    usage_error("restart mode needs --berthd, --state-dir, --volumes and --ids-per-volume");
  }
  if (!have_concurrency) {
    opt.concurrency = 16;
  }
  return berth::bench::run_restart(opt);
}
