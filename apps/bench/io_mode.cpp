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
// The jobs: apps/bench/io_jobs.cpp.
// The volumes are measured against the host directory: a ratio of medians per job.
// Readable lines, then one JSON object as the last line.

#include "apps/bench/io_mode.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include <rapidjson/document.h>
#include <unistd.h>

#include "apps/bench/csi_client.hpp"
#include "apps/bench/io_jobs.hpp"
#include "apps/bench/plugin_client.hpp"
#include "core/json_text.hpp"

namespace berth::bench {

namespace {

namespace v1 = ::csi::v1;
namespace fs = std::filesystem;

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

int run_io(const io_options& opt) {
  bool ok = false;
  run_program({opt.fio, "--version"}, ok);
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
  auto version = run_program({opt.fio, "--version"}, ok);
  version.erase(version.find_last_not_of('\n') + 1);
  std::printf("%s, %s volumes of %ld MiB, %ld rounds of %.0f s per job\n", version.c_str(),
              opt.fs_type.c_str(), opt.size_mb, opt.rounds, opt.runtime);
  std::string json = "{\"mode\":\"io\",\"fs\":" + json_quote(opt.fs_type)
                     + ",\"ready_seconds\":{" + setup_json + "},\"jobs\":{";
  bool first_job = true;
  int failures = 0;
  for (const auto& j : io_jobs()) {
    const bool chosen =
      opt.jobs.empty() || std::find(opt.jobs.begin(), opt.jobs.end(), j.name) != opt.jobs.end();
    if (!chosen) {
      continue;
    }
    std::map<std::string, std::vector<double>> figures;
    for (long r = 0; r < opt.rounds; ++r) {
      for (size_t k = 0; k < t.dirs.size(); ++k) {
        const auto& [target, dir] = t.dirs[(k + static_cast<size_t>(r)) % t.dirs.size()];
        auto v = fio_figure(opt.fio, opt.runtime, j, dir);
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
