// The fio jobs of berth-bench io and how each figure is read (apps/bench/io_jobs.hpp).
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

#include "apps/bench/io_jobs.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <rapidjson/document.h>
#include <sys/wait.h>
#include <unistd.h>

namespace berth::bench {

namespace {

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

} // namespace

const std::vector<io_job>& io_jobs() {
  static const std::vector<io_job> table = {
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

std::string run_program(const std::vector<std::string>& argv, bool& ok) {
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

std::optional<double> fio_figure(const std::string& fio, double runtime, const io_job& j,
                                 const std::string& dir) {
  std::vector<std::string> argv{fio, "--output-format=json", "--name=" + j.name,
                                "--directory=" + dir};
  if (!j.measures_cache) {
    argv.push_back("--time_based");
    argv.push_back("--runtime=" + std::to_string(runtime));
  }
  argv.insert(argv.end(), j.args.begin(), j.args.end());
  bool ok = false;
  if (j.name == "cache") { // laid out with O_DIRECT first, so only the read is counted
    std::vector<std::string> lay{fio,         "--name=" + j.name, "--directory=" + dir,
                                 "--rw=write",     "--bs=1m",          "--size=256m",
                                 "--direct=1",     "--ioengine=psync"};
    run_program(lay, ok);
    if (!ok) {
      return std::nullopt;
    }
  }
  drop_caches();
  run_program({fio, "--version"}, ok); // fio and its libraries' pages (~58 MB): not the job's
  const double before = cached_bytes();
  auto text = run_program(argv, ok);
  double after = cached_bytes();
  std::filesystem::remove(dir + "/" + j.name + ".0.0");
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

const std::vector<std::string>& io_job_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& j : io_jobs()) {
      out.push_back(j.name);
    }
    return out;
  }();
  return names;
}

} // namespace berth::bench
