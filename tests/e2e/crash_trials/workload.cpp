// The crash trials' workload: the steps of its Docker workers, CSI workers and publishers of the
// shared CSI volume. Over 400 lines because every kind of worker records its answers through the
// same private helpers (settle, free_slot, chance); a file per kind would have to export them.

#include "tests/e2e/crash_trials/workload.hpp"

#include <filesystem>
#include <functional>
#include <random>

#include "tests/e2e/crash_trials/clients.hpp"

namespace berth::crash_trials {

namespace {

namespace v1 = ::csi::v1;

using rng_t = std::mt19937_64;

constexpr uint64_t MiB = 1024ull * 1024;
constexpr uint64_t csi_volume_bytes = 512 * MiB; // xfs needs 300 MiB; the image is sparse
constexpr uint64_t csi_grow_bytes = 64 * MiB;

/// The mount IDs of the owned Docker volumes: few, so IDs repeat.
const std::vector<std::string> owned_ids = {"id-a", "id-b", "id-c"};
const std::vector<std::string> read_aheads = {"128", "256", "512"};

size_t pick(rng_t& rng, size_t n) {
  return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
}

/// True with probability `p` percent.
bool chance(rng_t& rng, unsigned p) {
  return pick(rng, 100) < p;
}

/// A non-frozen slot of `slots`, or null when every one waits for the check.
template <class View>
slot<View>* free_slot(rng_t& rng, std::vector<slot<View>>& slots) {
  std::vector<slot<View>*> free;
  for (auto& s : slots) {
    if (!s.frozen()) {
      free.push_back(&s);
    }
  }
  return free.empty() ? nullptr : free[pick(rng, free.size())];
}

/// Records an answer into `s`: `after` is the state the request makes.
template <class View>
bool settle(tally& t, slot<View>& s, const answer& a, const View& after) {
  switch (a.result) {
    case outcome::done: ++t.done; s.known = after; return true;
    case outcome::refused: ++t.refused; return true;
    case outcome::unknown: ++t.unknown; s.maybe = after; return false;
  }
  return false;
}

// -- Docker ---------------------------------------------------------------------------

std::string name_body(const std::string& name) {
  return "{\"Name\":" + json_string(name) + "}";
}

std::string mount_body(const std::string& name, const std::string& id) {
  return "{\"Name\":" + json_string(name) + ",\"ID\":" + json_string(id) + "}";
}

/// A counted ID of `v`, or any ID (an Unmount of an uncounted one is a no-op).
std::string some_counted_id(rng_t& rng, const docker_view& v) {
  if (v.counts.empty() || chance(rng, 10)) {
    return owned_ids[pick(rng, owned_ids.size())];
  }
  auto it = v.counts.begin();
  std::advance(it, static_cast<long>(pick(rng, v.counts.size())));
  return it->first;
}

/// Sends one request for an owned Docker volume; false when it got no answer.
bool docker_step(rng_t& rng, tally& t, slot<docker_view>& s, plugin_client& plugin,
                 admin_client& admin) {
  auto after = s.known;
  auto roll = pick(rng, 100);
  if (!s.known.exists || roll < 5) {
    after.exists = true; // Create of an existing volume changes nothing
    return settle(t, s, plugin.call("Create", "{\"Name\":" + json_string(s.name)
                                                + ",\"Opts\":{}}"), after);
  }
  if (roll < 45) {
    auto id = owned_ids[pick(rng, owned_ids.size())];
    ++after.counts[id];
    return settle(t, s, plugin.call("Mount", mount_body(s.name, id)), after);
  }
  if (roll < 80) {
    auto id = some_counted_id(rng, s.known);
    if (auto it = after.counts.find(id); it != after.counts.end() && --it->second == 0) {
      after.counts.erase(it);
    }
    return settle(t, s, plugin.call("Unmount", mount_body(s.name, id)), after);
  }
  if (roll < 90) {
    // berthd runs without --docker-api, so an operator's release is not checked
    // against dockerd: it drops the whole count.
    auto id = some_counted_id(rng, s.known);
    after.counts.erase(id);
    return settle(t, s, admin.post("/v1/volumes/" + s.name + "/release",
                                   "{\"id\":" + json_string(id) + "}"), after);
  }
  // A Remove while counted is refused; one now and then shows that it stays so.
  if (!s.known.counts.empty() && !chance(rng, 20)) {
    auto id = some_counted_id(rng, s.known);
    if (auto it = after.counts.find(id); it != after.counts.end() && --it->second == 0) {
      after.counts.erase(it);
    }
    return settle(t, s, plugin.call("Unmount", mount_body(s.name, id)), after);
  }
  after = docker_view{};
  return settle(t, s, plugin.call("Remove", name_body(s.name)), after);
}

/// Mounts or unmounts a shared volume beside the other workers; false when it got
/// no answer.
bool shared_step(rng_t& rng, tally& t, shared_counts& shared, plugin_client& plugin) {
  std::string name;
  std::string id;
  bool unmount = false;
  {
    std::lock_guard<std::mutex> guard{shared.mtx};
    auto vol = shared.volumes.begin();
    std::advance(vol, static_cast<long>(pick(rng, shared.volumes.size())));
    auto c = vol->second.begin();
    std::advance(c, static_cast<long>(pick(rng, vol->second.size())));
    name = vol->first;
    id = c->first;
    unmount = c->second.unclaimed() > 0 && chance(rng, 50);
    ++(unmount ? c->second.pending_unmounts : c->second.pending_mounts);
  }
  auto a = plugin.call(unmount ? "Unmount" : "Mount", mount_body(name, id));
  std::lock_guard<std::mutex> guard{shared.mtx};
  auto& c = shared.volumes[name][id];
  auto& pending = unmount ? c.pending_unmounts : c.pending_mounts;
  switch (a.result) {
    case outcome::done:
      ++t.done;
      --pending;
      ++(unmount ? c.acked_unmounts : c.acked_mounts);
      return true;
    case outcome::refused: ++t.refused; --pending; return true;
    case outcome::unknown: ++t.unknown; return false; // stays pending: in flight
  }
  return false;
}

// -- CSI --------------------------------------------------------------------------------

/// Sends one request for an owned CSI volume; false when it got no answer.
bool csi_step(rng_t& rng, tally& t, slot<csi_view>& s, csi_client& c, const endpoints& at) {
  auto after = s.known;
  auto& v = s.known;
  auto roll = pick(rng, 100);
  auto staging = staging_path(at, s.name);
  auto targets = target_paths(at, s.name);
  if (!v.exists || roll < 3) {
    v1::CreateVolumeRequest req;
    req.set_name(s.name);
    req.mutable_capacity_range()->set_required_bytes(static_cast<int64_t>(csi_volume_bytes));
    *req.add_volume_capabilities() = mount_capability();
    v1::CreateVolumeResponse resp;
    auto a = rpc(*c.controller, &v1::Controller::Stub::CreateVolume, req, resp);
    if (!v.exists) {
      after = csi_view{};
      after.exists = true;
      after.capacity = a.done() ? static_cast<uint64_t>(resp.volume().capacity_bytes())
                                : csi_volume_bytes;
    }
    return settle(t, s, a, after);
  }
  if (roll < 13) {
    v1::ControllerExpandVolumeRequest req;
    req.set_volume_id(s.name);
    after.capacity = v.capacity + csi_grow_bytes;
    req.mutable_capacity_range()->set_required_bytes(static_cast<int64_t>(after.capacity));
    *req.mutable_volume_capability() = mount_capability();
    v1::ControllerExpandVolumeResponse resp;
    auto a = rpc(*c.controller, &v1::Controller::Stub::ControllerExpandVolume, req, resp);
    if (a.done()) {
      after.capacity = static_cast<uint64_t>(resp.capacity_bytes());
    }
    return settle(t, s, a, after);
  }
  if (roll < 23) {
    v1::ControllerModifyVolumeRequest req;
    req.set_volume_id(s.name);
    after.read_ahead = read_aheads[pick(rng, read_aheads.size())];
    (*req.mutable_mutable_parameters())["readAheadKB"] = after.read_ahead;
    v1::ControllerModifyVolumeResponse resp;
    return settle(t, s, rpc(*c.controller, &v1::Controller::Stub::ControllerModifyVolume, req,
                            resp), after);
  }
  if (!v.staged) {
    if (roll < 35) {
      // Refused while it is staged or published; fine here.
      v1::DeleteVolumeRequest req;
      req.set_volume_id(s.name);
      v1::DeleteVolumeResponse resp;
      return settle(t, s, rpc(*c.controller, &v1::Controller::Stub::DeleteVolume, req, resp),
                    csi_view{});
    }
    std::filesystem::create_directories(staging); // as the CO does
    v1::NodeStageVolumeRequest req;
    req.set_volume_id(s.name);
    req.set_staging_target_path(staging);
    *req.mutable_volume_capability() = mount_capability();
    v1::NodeStageVolumeResponse resp;
    after.staged = true;
    return settle(t, s, rpc(*c.node, &v1::Node::Stub::NodeStageVolume, req, resp), after);
  }
  auto target = targets[pick(rng, targets.size())];
  if (roll < 60) {
    v1::NodePublishVolumeRequest req;
    req.set_volume_id(s.name);
    req.set_staging_target_path(staging);
    req.set_target_path(target);
    *req.mutable_volume_capability() = mount_capability();
    v1::NodePublishVolumeResponse resp;
    after.targets.insert(target);
    return settle(t, s, rpc(*c.node, &v1::Node::Stub::NodePublishVolume, req, resp), after);
  }
  if (roll < 88 || (!v.targets.empty() && !chance(rng, 20))) {
    if (!v.targets.empty()) {
      target = *std::next(v.targets.begin(), static_cast<long>(pick(rng, v.targets.size())));
    }
    v1::NodeUnpublishVolumeRequest req;
    req.set_volume_id(s.name);
    req.set_target_path(target);
    v1::NodeUnpublishVolumeResponse resp;
    after.targets.erase(target);
    return settle(t, s, rpc(*c.node, &v1::Node::Stub::NodeUnpublishVolume, req, resp), after);
  }
  v1::NodeUnstageVolumeRequest req; // refused while published
  req.set_volume_id(s.name);
  req.set_staging_target_path(staging);
  v1::NodeUnstageVolumeResponse resp;
  after.staged = false;
  return settle(t, s, rpc(*c.node, &v1::Node::Stub::NodeUnstageVolume, req, resp), after);
}

} // namespace

std::vector<std::string> shared_ids() {
  return {"shared-id-0", "shared-id-1", "shared-id-2"};
}

trial_model::trial_model(int docker_workers, int csi_workers, int slots, int shared,
                         int publishers) {
  for (int p = 0; p < publishers; ++p) {
    auto& mine = publications.targets.emplace_back();
    for (int k = 0; k < slots; ++k) {
      mine.push_back({"p" + std::to_string(p) + "-t" + std::to_string(k), false, {}});
    }
  }
  for (int w = 0; w < docker_workers; ++w) {
    auto& mine = docker.emplace_back();
    for (int k = 0; k < slots; ++k) {
      mine.push_back({"dw" + std::to_string(w) + "-" + std::to_string(k), {}, {}});
    }
  }
  for (int w = 0; w < csi_workers; ++w) {
    auto& mine = csi.emplace_back();
    for (int k = 0; k < slots; ++k) {
      mine.push_back({"cw" + std::to_string(w) + "-" + std::to_string(k), {}, {}});
    }
  }
  for (int k = 0; k < shared; ++k) {
    auto& ids = this->shared.volumes["shared-" + std::to_string(k)];
    for (const auto& id : shared_ids()) {
      ids[id] = shared_count{};
    }
  }
}

std::string staging_path(const endpoints& at, const std::string& name) {
  return at.kubelet_dir + "/staging/" + name;
}

std::vector<std::string> target_paths(const endpoints& at, const std::string& name) {
  return {at.kubelet_dir + "/pods/t0/" + name, at.kubelet_dir + "/pods/t1/" + name};
}

std::string shared_target_path(const endpoints& at, const std::string& name) {
  return at.kubelet_dir + shared_targets_dir + name;
}

std::string create_and_stage(const endpoints& at, const std::string& name) {
  csi_client c{at.csi_endpoint};
  v1::CreateVolumeRequest create;
  create.set_name(name);
  create.mutable_capacity_range()->set_required_bytes(static_cast<int64_t>(csi_volume_bytes));
  *create.add_volume_capabilities() = mount_capability();
  v1::CreateVolumeResponse created;
  if (auto a = rpc(*c.controller, &v1::Controller::Stub::CreateVolume, create, created);
      !a.done()) {
    return "CreateVolume " + name + ": " + a.detail;
  }
  auto staging = staging_path(at, name);
  std::filesystem::create_directories(staging); // as the CO does
  v1::NodeStageVolumeRequest stage;
  stage.set_volume_id(name);
  stage.set_staging_target_path(staging);
  *stage.mutable_volume_capability() = mount_capability();
  v1::NodeStageVolumeResponse staged;
  if (auto a = rpc(*c.node, &v1::Node::Stub::NodeStageVolume, stage, staged); !a.done()) {
    return "NodeStageVolume " + name + ": " + a.detail;
  }
  return "";
}

workload::workload(trial_model& model, endpoints at, uint64_t seed)
  : model_(model), at_(std::move(at)), seed_(seed) {
}

workload::~workload() {
  stop();
}

void workload::start() {
  std::filesystem::create_directories(at_.kubelet_dir + "/pods/t0");
  std::filesystem::create_directories(at_.kubelet_dir + "/pods/t1");
  std::filesystem::create_directories(at_.kubelet_dir + shared_targets_dir);
  uint64_t n = 0;
  for (size_t w = 0; w < model_.docker.size(); ++w) {
    threads_.emplace_back([this, w, s = seed_ * 131 + ++n] { run_docker(w, s); });
  }
  for (size_t w = 0; w < model_.csi.size(); ++w) {
    threads_.emplace_back([this, w, s = seed_ * 131 + ++n] { run_csi(w, s); });
  }
  for (size_t p = 0; p < model_.publications.targets.size(); ++p) {
    threads_.emplace_back([this, p, s = seed_ * 131 + ++n] { run_publisher(p, s); });
  }
}

void workload::stop() {
  stopping_ = true;
  for (auto& th : threads_) {
    th.join();
  }
  threads_.clear();
}

void workload::run_docker(size_t worker, uint64_t seed) {
  rng_t rng{seed};
  plugin_client plugin{at_.plugin_socket};
  admin_client admin{at_.admin_socket};
  while (!stopping_) {
    auto* s = free_slot(rng, model_.docker[worker]);
    bool answered = s == nullptr || chance(rng, 35)
                      ? shared_step(rng, tally_, model_.shared, plugin)
                      : docker_step(rng, tally_, *s, plugin, admin);
    if (!answered) {
      return; // its request in flight is the one left open
    }
  }
}

void workload::run_csi(size_t worker, uint64_t seed) {
  rng_t rng{seed};
  csi_client client{at_.csi_endpoint};
  while (!stopping_) {
    auto* s = free_slot(rng, model_.csi[worker]);
    if (s == nullptr) {
      return; // every volume of its own waits for the check
    }
    if (!csi_step(rng, tally_, *s, client, at_)) {
      return;
    }
  }
}

void workload::run_publisher(size_t publisher, uint64_t seed) {
  rng_t rng{seed};
  csi_client c{at_.csi_endpoint};
  const auto& volume = model_.publications.volume;
  auto staging = staging_path(at_, volume);
  while (!stopping_) {
    auto* s = free_slot(rng, model_.publications.targets[publisher]);
    if (s == nullptr) {
      return; // every target of its own waits for the check
    }
    // Mostly the change its state calls for; now and then the one it is in already,
    // which must succeed and change nothing (an unpublish of a target the record
    // lacks is swept).
    bool publish = chance(rng, 15) ? s->known : !s->known;
    answer a;
    if (publish) {
      v1::NodePublishVolumeRequest req;
      req.set_volume_id(volume);
      req.set_staging_target_path(staging);
      req.set_target_path(shared_target_path(at_, s->name));
      *req.mutable_volume_capability() = mount_capability();
      v1::NodePublishVolumeResponse resp;
      a = rpc(*c.node, &v1::Node::Stub::NodePublishVolume, req, resp);
    } else {
      v1::NodeUnpublishVolumeRequest req;
      req.set_volume_id(volume);
      req.set_target_path(shared_target_path(at_, s->name));
      v1::NodeUnpublishVolumeResponse resp;
      a = rpc(*c.node, &v1::Node::Stub::NodeUnpublishVolume, req, resp);
    }
    if (!settle(tally_, *s, a, publish)) {
      return; // its request in flight is the one left open
    }
  }
}

} // namespace berth::crash_trials
