#pragma once

// The mixed concurrent workload of a crash trial: Docker workers (Create, Remove,
// Mount and Unmount with repeated IDs, releases of mount IDs through the admin API,
// and Mounts and Unmounts of the shared volumes beside the other workers) and CSI
// workers (create, stage, publish, unpublish, unstage, delete, expand, modify), and
// publishers of the shared CSI volume, each at targets of its own, all at once.
// Every answer goes into the model as it comes (model.hpp); a worker stops at its
// first request without an answer, which is then the one it had in flight.

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/crash_trials/model.hpp"

namespace berth::crash_trials {

/// Every volume of a trial, as its acknowledged requests left it.
struct trial_model {
  /// `docker_workers` × `slots` Docker volumes, as many CSI ones per CSI worker,
  /// `shared` shared Docker volumes, and the shared CSI volume with `slots` targets for
  /// each of `publishers` (the shared volumes are made before the first cycle).
  trial_model(int docker_workers, int csi_workers, int slots, int shared, int publishers);

  std::vector<std::vector<slot<docker_view>>> docker; ///< [worker][slot]
  std::vector<std::vector<slot<csi_view>>> csi;       ///< [worker][slot]
  shared_counts shared;
  shared_publications publications;
};

/// Where berthd listens, and the kubelet directory CSI paths lie under.
struct endpoints {
  std::string plugin_socket;
  std::string admin_socket;
  std::string csi_endpoint;
  std::string kubelet_dir;
};

/// The mount IDs the shared volumes are mounted with by every worker.
std::vector<std::string> shared_ids();

/// The staging path of a CSI volume, and its target paths.
std::string staging_path(const endpoints& at, const std::string& name);
std::vector<std::string> target_paths(const endpoints& at, const std::string& name);
/// The path of the shared CSI volume's target `name`.
std::string shared_target_path(const endpoints& at, const std::string& name);
/// The directory below which the shared CSI volume's targets lie.
inline constexpr const char* shared_targets_dir = "/pods/shared/";

/// Creates and stages the CSI volume `name` (cycle A, for the shared one); else why not.
std::string create_and_stage(const endpoints& at, const std::string& name);

/// How many requests a cycle sent, by outcome.
struct tally {
  std::atomic<uint64_t> done{0};
  std::atomic<uint64_t> refused{0};
  std::atomic<uint64_t> unknown{0};
};

/// One cycle of the workload: start() spawns the workers, stop() ends and joins them.
class workload {
public:
  workload(trial_model& model, endpoints at, uint64_t seed);
  ~workload();

  void start();
  void stop();

  const tally& counted() const {
    return tally_;
  }

private:
  void run_docker(size_t worker, uint64_t seed);
  void run_csi(size_t worker, uint64_t seed);
  void run_publisher(size_t publisher, uint64_t seed);

  trial_model& model_;
  endpoints at_;
  uint64_t seed_;
  std::atomic<bool> stopping_{false};
  tally tally_;
  std::vector<std::thread> threads_;
};

} // namespace berth::crash_trials
