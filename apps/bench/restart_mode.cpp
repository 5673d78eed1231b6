// berth-bench restart: how long berthd takes to serve again with many volumes.
//
//   1. when STATE/volumes holds fewer than N `<prefix>-*` volumes: start berthd,
//      Create the missing volumes and Mount K IDs on each, stop it (SIGTERM)
//   2. start berthd again; time from exec to the first good VolumeDriver.List
//   3. unless --keep: Unmount every ID, Remove every volume, stop berthd

#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apps/bench/common.hpp"
#include "apps/bench/latency.hpp"
#include "apps/bench/plugin_client.hpp"

namespace berth::bench {

namespace {

/// A berthd child process, its output appended to a log file.
class daemon_process {
public:
  daemon_process(const options& opt) : opt_(opt), log_(opt.socket + ".log") {
  }

  ~daemon_process() {
    if (pid_ > 0) {
      stop();
    }
  }

  /// Forks and execs berthd; returns false when fork fails.
  bool start() {
    std::vector<std::string> args = {opt_.berthd,     "--state-dir",      opt_.state_dir,
                                     "--docker-socket", opt_.socket,    "--admin-socket",
                                     opt_.socket + ".admin",
                                     // Never the host's dockerd (a later --berthd-arg wins).
                                     "--docker-api",    ""};
    args.insert(args.end(), opt_.berthd_args.begin(), opt_.berthd_args.end());
    std::vector<char*> argv;
    for (auto& a : args) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    auto pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "berth-bench: fork: %s\n", std::strerror(errno));
      return false;
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    pid_ = pid;
    return true;
  }

  /// Polls VolumeDriver.List until it succeeds; returns the listed names.
  bool wait_ready(double timeout_s, std::vector<std::string>& names) {
    auto deadline = bench_clock::now() + std::chrono::duration<double>(timeout_s);
    while (bench_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        std::fprintf(stderr, "berth-bench: berthd exited early (status %d); see %s\n", status,
                     log_.c_str());
        pid_ = 0;
        return false;
      }
      plugin_client probe(opt_.socket);
      if (probe.list(names).ok) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    std::fprintf(stderr, "berth-bench: berthd did not answer List within %.0f s; see %s\n",
                 timeout_s, log_.c_str());
    return false;
  }

  /// SIGTERM and wait (SIGKILL after 60 s); returns milliseconds until exit.
  double stop() {
    auto t0 = bench_clock::now();
    if (pid_ <= 0) {
      return 0;
    }
    ::kill(pid_, SIGTERM);
    auto deadline = t0 + std::chrono::seconds(60);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (bench_clock::now() > deadline) {
        std::fprintf(stderr, "berth-bench: berthd ignored SIGTERM for 60 s, killing it\n");
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = 0;
    return elapsed_ms(t0, bench_clock::now());
  }

  long pid() const {
    return static_cast<long>(pid_);
  }

  const std::string& log() const {
    return log_;
  }

private:
  const options& opt_;
  std::string log_;
  pid_t pid_ = 0;
};

/// Names under STATE/volumes that start with `<prefix>-`.
long count_state_volumes(const options& opt) {
  auto dir = opt.state_dir + "/volumes";
  auto* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return 0;
  }
  long n = 0;
  auto want = opt.prefix + "-";
  while (auto* e = ::readdir(d)) {
    if (std::strncmp(e->d_name, want.c_str(), want.size()) == 0) {
      ++n;
    }
  }
  ::closedir(d);
  return n;
}

long count_prefixed(const std::vector<std::string>& names, const std::string& prefix) {
  long n = 0;
  for (auto& name : names) {
    if (name.compare(0, prefix.size() + 1, prefix + "-") == 0) {
      ++n;
    }
  }
  return n;
}

std::string restart_id(long volume, long k) {
  return "restart-" + std::to_string(volume) + "-" + std::to_string(k);
}

/// Runs `fn(client, i)` for every volume index with C clients.
template <class F>
void for_each_volume(const options& opt, long n, F fn) {
  std::vector<std::unique_ptr<plugin_client>> clients;
  for (long t = 0; t < opt.concurrency; ++t) {
    clients.push_back(std::make_unique<plugin_client>(opt.socket));
  }
  parallel_for(n, opt.concurrency,
               [&](long t, long i) { fn(*clients[static_cast<size_t>(t)], i); });
}

} // namespace

int run_restart(const options& opt) {
  error_log errors;
  daemon_process berthd(opt);
  std::vector<std::string> names;

  // -- populate ---------------------------------------------------------------
  long present = count_state_volumes(opt);
  if (present < opt.volumes) {
    std::printf("populate: %ld of %ld volumes in %s; creating the rest with %ld IDs each\n",
                present, opt.volumes, opt.state_dir.c_str(), opt.ids_per_volume);
    if (!berthd.start() || !berthd.wait_ready(60, names)) {
      return 1;
    }
    auto t0 = bench_clock::now();
    std::set<std::string> have(names.begin(), names.end());
    for_each_volume(opt, opt.volumes, [&](plugin_client& client, long i) {
      auto name = volume_name(opt.prefix, i);
      if (have.count(name) != 0) {
        return;
      }
      auto r = client.create(name);
      if (!r.ok) {
        errors.add("Create " + name + ": " + r.err);
        return;
      }
      for (long k = 0; k < opt.ids_per_volume; ++k) {
        auto m = client.mount(name, restart_id(i, k));
        if (!m.ok) {
          errors.add("Mount " + name + ": " + m.err);
        }
      }
    });
    std::printf("populate: done in %.2f s, %" PRIu64 " errors\n",
                elapsed_ms(t0, bench_clock::now()) / 1000.0, errors.count());
    double stop_ms = berthd.stop();
    std::printf("populate: berthd stopped (SIGTERM) in %.1f ms\n", stop_ms);
  } else {
    std::printf("populate: %s already holds %ld volumes\n", opt.state_dir.c_str(), present);
  }

  // -- measure ----------------------------------------------------------------
  auto t0 = bench_clock::now();
  if (!berthd.start()) {
    return 1;
  }
  bool ready = berthd.wait_ready(60, names);
  double restart_ms = elapsed_ms(t0, bench_clock::now());
  if (!ready) {
    return 1;
  }
  long listed = count_prefixed(names, opt.prefix);
  auto rss = read_rss_mb(berthd.pid());
  std::printf("restart: berthd (pid %ld) answered List after %.1f ms, listing %ld of %ld volumes\n",
              berthd.pid(), restart_ms, listed, opt.volumes);
  // Give the daemon a moment to finish whatever it does right after start.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto rss_settled = read_rss_mb(berthd.pid());
  std::printf("rss: VmRSS %.1f MB at first reply, %.1f MB 0.5 s later\n", rss.value_or(0.0),
              rss_settled.value_or(0.0));
  if (listed < opt.volumes) {
    errors.add("List after restart shows " + std::to_string(listed) + " of " +
               std::to_string(opt.volumes) + " volumes");
  }

  // -- clean up ---------------------------------------------------------------
  if (!opt.keep) {
    auto c0 = bench_clock::now();
    for_each_volume(opt, opt.volumes, [&](plugin_client& client, long i) {
      auto name = volume_name(opt.prefix, i);
      for (long k = 0; k < opt.ids_per_volume; ++k) {
        auto u = client.unmount(name, restart_id(i, k));
        if (!u.ok) {
          errors.add("Unmount " + name + ": " + u.err);
        }
      }
      auto r = client.remove(name);
      if (!r.ok) {
        errors.add("Remove " + name + ": " + r.err);
      }
    });
    std::printf("cleanup: unmounted and removed %ld volumes in %.2f s\n", opt.volumes,
                elapsed_ms(c0, bench_clock::now()) / 1000.0);
  }
  berthd.stop();
  std::printf("errors: %" PRIu64 "\n", errors.count());
  std::printf("{\"mode\":\"restart\",\"restart_ms\":%.1f,\"volumes\":%ld,\"listed\":%ld,"
              "\"ids_per_volume\":%ld,\"errors\":%" PRIu64,
              restart_ms, opt.volumes, listed, opt.ids_per_volume, errors.count());
  if (rss) {
    std::printf(",\"rss_mb\":%.1f,\"rss_settled_mb\":%.1f", *rss, rss_settled.value_or(0.0));
  }
  std::printf("}\n");
  std::fflush(stdout);
  return errors.count() == 0 ? 0 : 2;
}

} // namespace berth::bench
