// berth-bench io: what a workload meets on the data path, against the disk under it.
//
//   setup:    a CSI block volume (CreateVolume, NodeStage, NodePublish below --work-dir)
//             and a Docker block volume (Create -o backend=block, Mount), each --size-mb,
//             each timed until it is ready
//   each job: for --rounds rounds, fio in every target (the CSI target, the Docker
//             mount point, --host-dir) in an order that rotates each round, the page cache
//             dropped before each run
//   teardown: unpublish, unstage and delete; unmount and remove
//
// The jobs (fio from Debian, --output-format=json):
//   fsync  4 KiB writes, each fsync'd, iodepth 1, into a new file           IOPS
//   fsync-over  the same over a file written before (a preallocated WAL, a data file) IOPS
//   seqw   1 MiB O_DIRECT writes, iodepth 8                               MB/s
//   seqr   1 MiB O_DIRECT reads, iodepth 8                                MB/s
//   randw  4 KiB O_DIRECT random writes, iodepth 32                       IOPS
//   randr  4 KiB O_DIRECT random reads, iodepth 32                        IOPS
//   cache  a 256 MiB file read once, buffered: the page cache it leaves, in file sizes
//   dio    256 MiB written with O_DIRECT: the page cache it leaves, in file sizes
// The volumes are measured against the host directory: a ratio of medians per job.
// Readable lines, then one JSON object as the last line.

#include "apps/bench/io_mode.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <rapidjson/document.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apps/bench/csi_client.hpp"
#include "apps/bench/plugin_client.hpp"
#include "core/json_text.hpp"

namespace berth::bench {

namespace {

namespace v1 = ::csi::v1;
namespace fs = std::filesystem;

struct job {
  std::string name;
  std::vector<std::string> args; ///< fio's, after --name and --directory
  const char* unit;              ///< what the figure is
  /// The figure is the page cache the job leaves over a 256 MiB file, not fio's rate.
  bool measures_cache = false;
};

const std::vector<job>& jobs() {
  static const std::vector<job> table = {
    {"fsync", {"--rw=write", "--bs=4k", "--size=64m", "--fsync=1", "--ioengine=psync"}, "IOPS"},
    {"fsync-over",
     {"--rw=write", "--bs=4k", "--size=64m", "--fsync=1", "--ioengine=psync", "--overwrite=1"},
     "IOPS"},
    {"seqw",
     {"--rw=write", "--bs=1m", "--size=1g", "--direct=1", "--iodepth=8", "--ioengine=libaio"},
     "MB/s"},
    {"seqr",
     {"--rw=read", "--bs=1m", "--size=1g", "--direct=1", "--iodepth=8", "--ioengine=libaio"},
     "MB/s"},
    {"randw",
     {"--rw=randwrite", "--bs=4k", "--size=1g", "--direct=1", "--iodepth=32",
      "--ioengine=libaio"},
     "IOPS"},
    {"randr",
     {"--rw=randread", "--bs=4k", "--size=1g", "--direct=1", "--iodepth=32",
      "--ioengine=libaio"},
     "IOPS"},
    {"cache", {"--rw=read", "--bs=1m", "--size=256m", "--ioengine=psync"}, "x size cached", true},
    {"dio", {"--rw=write", "--bs=1m", "--size=256m", "--direct=1", "--ioengine=psync"},
     "x size cached", true},
  };
  return table;
}

/// Runs argv, returns its standard output; `ok` false when it did not exit 0.
std::string run(const std::vector<std::string>& argv, bool& ok) {
  int out[2];
  ok = false;
  if (::pipe2(out, O_CLOEXEC) != 0) {
    return {};
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return {};
  }
  if (pid == 0) {
    ::dup2(out[1], 1);
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 2);
    std::vector<char*> args;
    for (const auto& a : argv) {
      args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) {
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return text;
}

/// Writes dirty pages back and drops the page cache: each run starts from the disk.
void drop_caches() {
  ::sync();
  std::ofstream("/proc/sys/vm/drop_caches") << "3\n";
}

/// "Cached:" of /proc/meminfo, in bytes.
double cached_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "Cached:") {
      return kib * 1024;
    }
  }
  return 0;
}

/// fio's read+write IOPS, or MB/s for a job measured so, or the page cache a job left in
/// sizes of its file; nothing when fio failed.
std::optional<double> fio_figure(const io_options& opt, const job& j, const std::string& dir) {
  std::vector<std::string> argv{opt.fio, "--output-format=json", "--name=" + j.name,
                                "--directory=" + dir};
  if (!j.measures_cache) {
    argv.push_back("--time_based");
    argv.push_back("--runtime=" + std::to_string(opt.runtime));
  }
  argv.insert(argv.end(), j.args.begin(), j.args.end());
  bool ok = false;
  if (j.name == "cache") { // laid out with O_DIRECT first, so only the read is counted
    std::vector<std::string> lay{opt.fio,         "--name=" + j.name, "--directory=" + dir,
                                 "--rw=write",     "--bs=1m",          "--size=256m",
                                 "--direct=1",     "--ioengine=psync"};
    run(lay, ok);
    if (!ok) {
      return std::nullopt;
    }
  }
  drop_caches();
  run({opt.fio, "--version"}, ok); // fio and its libraries' pages (~58 MB): not the job's
  const double before = cached_bytes();
  auto text = run(argv, ok);
  double after = cached_bytes();
  fs::remove(dir + "/" + j.name + ".0.0");
  if (!ok) {
    return std::nullopt;
  }
  if (j.measures_cache) { // the cache may also have shrunk meanwhile: then the job left nothing
    return std::max(0.0, after - before) / (256.0 * 1024 * 1024);
  }
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("jobs") || doc["jobs"].Empty()) {
    return std::nullopt;
  }
  const auto& r = doc["jobs"][0]["read"];
  const auto& w = doc["jobs"][0]["write"];
  if (std::string(j.unit) == "MB/s") {
    return (r["bw_bytes"].GetDouble() + w["bw_bytes"].GetDouble()) / 1e6;
  }
  return r["iops"].GetDouble() + w["iops"].GetDouble();
}

double median(std::vector<double> v) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

/// The volumes measured, and how to take them down again.
struct targets {
  std::vector<std::pair<std::string, std::string>> dirs; ///< name, directory
  std::string csi_id, staging, target, docker_name;
};

bool set_up_csi(const io_options& opt, csi_client& c, targets& t, const std::string& name) {
  auto req = create_request(name, opt.size_mb * 1024 * 1024, "block");
  req.mutable_volume_capabilities(0)->mutable_mount()->set_fs_type(opt.fs_type);
  v1::CreateVolumeResponse created;
  if (auto err = rpc(*c.controller, &v1::Controller::Stub::CreateVolume, req, created);
      !err.empty()) {
    std::fprintf(stderr, "berth-bench: CreateVolume %s: %s\n", name.c_str(), err.c_str());
    return false;
  }
  t.csi_id = created.volume().volume_id();
  auto base = opt.work_dir + "/berth-bench-io-" + std::to_string(::getpid());
  fs::create_directories(base);
  t.staging = base + "/staging";
  t.target = base + "/target";
  v1::NodeStageVolumeRequest stage;
  stage.set_volume_id(t.csi_id);
  stage.set_staging_target_path(t.staging);
  *stage.mutable_volume_capability() = req.volume_capabilities(0);
  v1::NodeStageVolumeResponse staged;
  if (auto err = rpc(*c.node, &v1::Node::Stub::NodeStageVolume, stage, staged); !err.empty()) {
    std::fprintf(stderr, "berth-bench: NodeStageVolume %s: %s\n", t.csi_id.c_str(), err.c_str());
    t.staging.clear();
    return false;
  }
  v1::NodePublishVolumeRequest pub;
  pub.set_volume_id(t.csi_id);
  pub.set_staging_target_path(t.staging);
  pub.set_target_path(t.target);
  *pub.mutable_volume_capability() = req.volume_capabilities(0);
  v1::NodePublishVolumeResponse published;
  if (auto err = rpc(*c.node, &v1::Node::Stub::NodePublishVolume, pub, published); !err.empty()) {
    std::fprintf(stderr, "berth-bench: NodePublishVolume %s: %s\n", t.csi_id.c_str(),
                 err.c_str());
    t.target.clear();
    return false;
  }
  t.dirs.emplace_back("csi", t.target);
  return true;
}

bool set_up_docker(const io_options& opt, plugin_client& p, targets& t, const std::string& name) {
  auto res = p.call("Create", "{\"Name\":" + json_quote(name)
                                + ",\"Opts\":{\"backend\":\"block\",\"size\":\""
                                + std::to_string(opt.size_mb) + "M\",\"fstype\":"
                                + json_quote(opt.fs_type) + "}}");
  if (!res.ok) {
    std::fprintf(stderr, "berth-bench: Create %s: %s\n", name.c_str(), res.err.c_str());
    return false;
  }
  t.docker_name = name;
  res = p.mount(name, "berth-bench-io");
  rapidjson::Document doc;
  doc.Parse(res.body.c_str(), res.body.size());
  if (!res.ok || !doc.IsObject() || !doc.HasMember("Mountpoint")
      || !doc["Mountpoint"].IsString()) {
    std::fprintf(stderr, "berth-bench: Mount %s: %s\n", name.c_str(), res.err.c_str());
    return false;
  }
  t.dirs.emplace_back("docker", doc["Mountpoint"].GetString());
  return true;
}

void tear_down(csi_client* c, plugin_client* p, const targets& t) {
  if (c != nullptr && !t.csi_id.empty()) {
    if (!t.target.empty()) {
      v1::NodeUnpublishVolumeRequest unpub;
      unpub.set_volume_id(t.csi_id);
      unpub.set_target_path(t.target);
      v1::NodeUnpublishVolumeResponse done;
      if (auto err = rpc(*c->node, &v1::Node::Stub::NodeUnpublishVolume, unpub, done);
          !err.empty()) {
        std::fprintf(stderr, "berth-bench: NodeUnpublishVolume %s: %s\n", t.target.c_str(),
                     err.c_str());
      }
    }
    if (!t.staging.empty()) {
      v1::NodeUnstageVolumeRequest unstage;
      unstage.set_volume_id(t.csi_id);
      unstage.set_staging_target_path(t.staging);
      v1::NodeUnstageVolumeResponse done;
      if (auto err = rpc(*c->node, &v1::Node::Stub::NodeUnstageVolume, unstage, done);
          !err.empty()) {
        std::fprintf(stderr, "berth-bench: NodeUnstageVolume %s: %s\n", t.staging.c_str(),
                     err.c_str());
      }
    }
    v1::DeleteVolumeRequest del;
    del.set_volume_id(t.csi_id);
    v1::DeleteVolumeResponse deleted;
    if (auto err = rpc(*c->controller, &v1::Controller::Stub::DeleteVolume, del, deleted);
        !err.empty()) {
      std::fprintf(stderr, "berth-bench: DeleteVolume %s: %s\n", t.csi_id.c_str(), err.c_str());
    }
    std::error_code ec;
    fs::remove_all(fs::path(t.staging).parent_path(), ec);
  }
  if (p != nullptr && !t.docker_name.empty()) {
    if (auto res = p->unmount(t.docker_name, "berth-bench-io"); !res.ok) {
      std::fprintf(stderr, "berth-bench: Unmount %s: %s\n", t.docker_name.c_str(),
                   res.err.c_str());
    }
    if (auto res = p->remove(t.docker_name); !res.ok) {
      std::fprintf(stderr, "berth-bench: Remove %s: %s\n", t.docker_name.c_str(),
                   res.err.c_str());
    }
  }
}

} // namespace

const std::vector<std::string>& io_job_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& j : jobs()) {
      out.push_back(j.name);
    }
    return out;
  }();
  return names;
}

int run_io(const io_options& opt) {
  bool ok = false;
  run({opt.fio, "--version"}, ok);
  if (!ok) {
    std::fprintf(stderr, "berth-bench: cannot run %s (apt-get install fio)\n", opt.fio.c_str());
    return 1;
  }
  const auto name = opt.prefix + "-io-" + std::to_string(::getpid());
  targets t;
  std::unique_ptr<csi_client> csi;
  std::unique_ptr<plugin_client> docker;
  bool ready = true;
  std::string setup_json;
  auto timed = [&](const char* what, const char* how, auto set_up) {
    auto start = std::chrono::steady_clock::now();
    ready = set_up();
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    if (ready) {
      std::printf("%s volume ready (%s) in %.3f s\n", what, how, took.count());
      setup_json += std::string(setup_json.empty() ? "" : ",") + json_quote(what) + ":"
                    + std::to_string(took.count());
    }
  };
  if (!opt.endpoint.empty()) {
    csi = std::make_unique<csi_client>(opt.endpoint);
    timed("csi", "CreateVolume, NodeStageVolume, NodePublishVolume",
          [&] { return set_up_csi(opt, *csi, t, name); });
  }
  if (ready && !opt.socket.empty()) {
    docker = std::make_unique<plugin_client>(opt.socket);
    timed("docker", "Create, Mount",
          [&] { return set_up_docker(opt, *docker, t, name + "-docker"); });
  }
  if (!ready) {
    tear_down(csi.get(), docker.get(), t);
    return 1;
  }
  t.dirs.emplace_back("host", opt.host_dir);
  auto version = run({opt.fio, "--version"}, ok);
  version.erase(version.find_last_not_of('\n') + 1);
  std::printf("%s, %s volumes of %ld MiB, %ld rounds of %.0f s per job\n", version.c_str(),
              opt.fs_type.c_str(), opt.size_mb, opt.rounds, opt.runtime);
  std::string json = "{\"mode\":\"io\",\"fs\":" + json_quote(opt.fs_type)
                     + ",\"ready_seconds\":{" + setup_json + "},\"jobs\":{";
  bool first_job = true;
  int failures = 0;
  for (const auto& j : jobs()) {
    const bool chosen =
      opt.jobs.empty() || std::find(opt.jobs.begin(), opt.jobs.end(), j.name) != opt.jobs.end();
    if (!chosen) {
      continue;
    }
    std::map<std::string, std::vector<double>> figures;
    for (long r = 0; r < opt.rounds; ++r) {
      for (size_t k = 0; k < t.dirs.size(); ++k) {
        const auto& [target, dir] = t.dirs[(k + static_cast<size_t>(r)) % t.dirs.size()];
        auto v = fio_figure(opt, j, dir);
        if (!v) {
          std::fprintf(stderr, "berth-bench: fio %s in %s (%s) failed\n", j.name.c_str(),
                       dir.c_str(), target.c_str());
          ++failures;
          continue;
        }
        figures[target].push_back(*v);
      }
    }
    const double host = median(figures["host"]);
    std::printf("%-6s %-14s", j.name.c_str(), j.unit);
    json += std::string(first_job ? "" : ",") + json_quote(j.name) + ":{";
    first_job = false;
    bool first_target = true;
    for (const auto& [target, dir] : t.dirs) {
      double m = median(figures[target]);
      std::printf("  %s %.2f", target.c_str(), m);
      if (target != "host" && host > 0) {
        std::printf(" (%.2fx host)", m / host);
      }
      json += std::string(first_target ? "" : ",") + json_quote(target) + ":[";
      first_target = false;
      for (size_t i = 0; i < figures[target].size(); ++i) {
        json += (i == 0 ? "" : ",") + std::to_string(figures[target][i]);
      }
      json += "]";
    }
    json += "}";
    std::printf("\n");
    std::fflush(stdout);
  }
  json += "},\"failures\":" + std::to_string(failures) + "}";
  tear_down(csi.get(), docker.get(), t);
  std::printf("%s\n", json.c_str());
  return failures == 0 ? 0 : 1;
}

} // namespace berth::bench
