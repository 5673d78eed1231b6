#pragma once

// A backend for the actor tests that records its calls and fails or hangs on demand
// (tests/actors/fakes.hpp holds the rest of the fakes and the fixture).
//
// Over 400 lines because it is one class faking every call of the backend interface, each
// with its counter and its switches: split, one volume's test would need two fakes.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backends/backend.hpp"
#include "core/errors.hpp"

namespace berth::test {

/// A backend that records its calls; it can fail or hang on demand.
class fake_backend : public backend {
public:
  std::atomic<int> mounts{0}, unmounts{0}, lazy_unmounts{0}, creates{0}, removes{0};
  std::atomic<bool> fail_mount{false}, fail_unmount{false}, hang_unmount{false},
    hang_mount{false}, hang_remove{false}, fail_remove{false}, hang_create{false};
  std::atomic<bool> host_mounted{false};
  /// Every mount and unmount takes this long (a stand-in for mount(2)'s work).
  std::atomic<int> call_ms{0};
  /// Calls of create, mount, unmount and stage running now, and the most ever at once.
  std::atomic<int> in_flight{0}, max_in_flight{0};
  bool copies = true; ///< copies_content(): the fake "copies" sources unless told not to
  /// What create_copy() says of each copy's consistency.
  std::string copy_consistency;
  /// A source whose name is this is refused by check_copy_source() ("" refuses none).
  std::string uncopyable;

  // -- CSI -----------------------------------------------------------------------
  static constexpr uint64_t mib = 1024 * 1024;
  static constexpr uint64_t min_bytes = 4 * mib; ///< choose_capacity's minimum
  std::atomic<int> stages{0}, unstages{0}, sweeps{0}, publishes{0}, unpublishes{0}, expands{0},
    grows{0}, stats_calls{0};
  /// The loop device the fake "attached" at its last stage ("" when detached).
  std::string attached() {
    std::lock_guard<std::mutex> guard{mtx_};
    return attached_;
  }
  /// sweep_staging answers ec::unsupported, as a backend without staging does.
  std::atomic<bool> cannot_sweep{false};
  std::atomic<bool> fail_stage{false}, fail_unstage{false}, fail_publish{false},
    fail_unpublish{false}, fail_expand{false}, fail_grow{false}, fail_stats{false},
    hang_stage{false};
  std::atomic<uint64_t> free_bytes{64 * 1024 * mib};
  std::atomic<uint64_t> expanded_to{0}; ///< the bytes of the last modify that had a size

  std::string name() const override { return "local"; }
  bool copies_content() const override { return copies; }
  caf::error check_copy_source(const volume_record& source) const override {
    if (!uncopyable.empty() && source.name == uncopyable) {
      return make_error(ec::unsupported, "volume " + source.name + " cannot be copied");
    }
    return {};
  }
  /// Exports opened and not yet closed, and the trees imports were made from.
  std::set<std::string> open_exports;
  std::vector<std::string> imported_trees;
  caf::expected<export_view> open_export(const volume_record&, const std::string& id) override {
    std::lock_guard<std::mutex> guard{mtx_};
    open_exports.insert(id);
    return export_view{"/fake/exports/" + id, copy_consistency};
  }
  caf::error close_export(const volume_record&, const std::string& id) override {
    std::lock_guard<std::mutex> guard{mtx_};
    open_exports.erase(id);
    return {};
  }
  caf::error create_from_tree(const volume_record& rec, const std::string& tree) override {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      imported_trees.push_back(tree);
    }
    return create(rec);
  }
  caf::expected<std::string> create_copy(const volume_record& rec) override {
    if (auto err = create(rec)) {
      return err;
    }
    return copy_consistency;
  }
  caf::error validate(const std::string&, const option_map& options) const override {
    for (const auto& [k, v] : options) {
      // from-snapshot, clone-of and size: the fake copies and sizes, as the block backend does.
      if (k != "type" && k != "device" && k != "o" && k != "fsType" && k != "from-snapshot"
          && k != "clone-of" && k != "size") {
        return make_error(ec::invalid_argument, "unknown option \"" + k + "\"");
      }
    }
    return {};
  }
  /// A Docker volume's capacity: its option size, in plain bytes (0 without one).
  caf::expected<uint64_t> validate_docker(const std::string& volume,
                                          const option_map& options) const override {
    if (auto err = validate(volume, options)) {
      return err;
    }
    auto size = options.find("size");
    return size == options.end() ? uint64_t{0} : std::stoull(size->second);
  }
  caf::error create(const volume_record&) override {
    flight f{*this};
    ++creates;
    if (hang_create) {
      std::unique_lock<std::mutex> guard{mtx_};
      cv_.wait_for(guard, std::chrono::seconds(10), [this] { return !hang_create; });
    }
    return {};
  }
  caf::expected<std::string> mount(const volume_record& rec) override {
    flight f{*this};
    ++mounts;
    if (hang_mount) {
      std::unique_lock<std::mutex> guard{mtx_};
      cv_.wait_for(guard, std::chrono::seconds(10), [this] { return !hang_mount; });
    }
    if (fail_mount) {
      return make_error(ec::backend_failure, "mount of " + rec.name + " failed: injected");
    }
    host_mounted = true;
    return "/fake/" + rec.name;
  }
  caf::error unmount(const volume_record& rec, bool lazy) override {
    if (lazy) {
      ++lazy_unmounts;
      host_mounted = false;
      return {};
    }
    flight f{*this};
    ++unmounts;
    if (hang_unmount) {
      std::unique_lock<std::mutex> guard{mtx_};
      cv_.wait_for(guard, std::chrono::seconds(10), [this] { return !hang_unmount; });
    }
    if (fail_unmount) {
      return make_error(ec::backend_failure, "unmount of " + rec.name + " failed: injected");
    }
    host_mounted = false;
    return {};
  }
  caf::error remove(const volume_record& rec) override {
    ++removes;
    if (hang_remove) {
      std::unique_lock<std::mutex> guard{mtx_};
      cv_.wait_for(guard, std::chrono::seconds(10), [this] { return !hang_remove; });
    }
    if (fail_remove) {
      return make_error(ec::backend_failure, "remove of " + rec.name + " failed: injected");
    }
    return {};
  }
  std::string mountpoint(const volume_record& rec) const override { return "/fake/" + rec.name; }

  // -- CSI overrides -------------------------------------------------------------

  /// Rounds up to 1 MiB, at least min_bytes; out_of_range above the limit.
  caf::expected<uint64_t> choose_capacity(const volume_spec& spec) const override {
    auto want = std::max(spec.required_bytes, min_bytes);
    auto bytes = (want + mib - 1) / mib * mib;
    if (spec.limit_bytes != 0 && bytes > spec.limit_bytes) {
      return make_error(ec::out_of_range, "no size between " + std::to_string(spec.required_bytes)
                                            + " and " + std::to_string(spec.limit_bytes));
    }
    return bytes;
  }
  mutable std::atomic<int> capacity_reads{0};
  caf::expected<uint64_t> available_capacity() const override {
    ++capacity_reads;
    return free_bytes.load();
  }
  caf::expected<std::string> stage(const volume_record& rec, const stage_request& req) override {
    flight f{*this};
    auto n = ++stages;
    if (hang_stage) {
      std::unique_lock<std::mutex> guard{mtx_};
      cv_.wait_for(guard, std::chrono::seconds(10), [this] { return !hang_stage; });
    }
    if (fail_stage) {
      return make_error(ec::backend_failure, "stage of " + rec.name + " failed: injected");
    }
    std::lock_guard<std::mutex> guard{mtx_};
    last_stage_ = req;
    staged_paths_[req.staging_path] = rec.name;
    attached_ = "/dev/loop" + std::to_string(n);
    return attached_;
  }
  caf::error unstage(const volume_record& rec) override {
    ++unstages;
    if (fail_unstage) {
      return make_error(ec::backend_failure, "unstage of " + rec.name + " failed: injected");
    }
    std::lock_guard<std::mutex> guard{mtx_};
    erase_if_owned(staged_paths_, rec.staging_path, rec.name);
    attached_.clear();
    return {};
  }
  /// Like the block backend: takes away only this volume's staging at `path`, and
  /// "detaches" only when the record stages the volume nowhere.
  caf::error sweep_staging(const volume_record& rec, const std::string& path) override {
    flight f{*this};
    ++sweeps;
    if (cannot_sweep) {
      return make_error(ec::unsupported, "fake backend: no sweep of " + path);
    }
    std::lock_guard<std::mutex> guard{mtx_};
    erase_if_owned(staged_paths_, path, rec.name);
    if (rec.staging_path.empty()) {
      attached_.clear();
    }
    return {};
  }
  /// Refuses a target that make_foreign (or another volume) took; reports the
  /// target as created by the publish.
  caf::expected<bool> publish(const volume_record& rec, const std::string& target,
                              const publication&) override {
    ++publishes;
    if (fail_publish) {
      return make_error(ec::backend_failure, "publish of " + rec.name + " failed: injected");
    }
    std::lock_guard<std::mutex> guard{mtx_};
    auto it = targets_.find(target);
    if (it != targets_.end() && it->second != rec.name) {
      return make_error(ec::failed_precondition, target + " is " + it->second + "'s");
    }
    targets_[target] = rec.name;
    return true;
  }
  caf::error unpublish(const volume_record& rec, const std::string& target) override {
    ++unpublishes;
    if (fail_unpublish) {
      return make_error(ec::backend_failure, "unpublish of " + rec.name + " failed: injected");
    }
    std::lock_guard<std::mutex> guard{mtx_};
    erase_if_owned(targets_, target, rec.name);
    return {};
  }
  // -- modifications -------------------------------------------------------------
  /// Every modify call, and the size and parameters of the last one.
  std::atomic<int> modifies{0};
  std::atomic<bool> fail_modify{false};
  /// Set: modify refuses as a backend in its cooldown does (ec::resource_exhausted).
  std::atomic<bool> cooling_down{false};
  /// Set: the next modify waits until release_modify() (a call that is running).
  std::atomic<bool> hold_modify{false};
  modification last_modification() {
    std::lock_guard<std::mutex> guard{mtx_};
    return last_modification_;
  }
  /// Blocks until a held modify is running.
  void wait_for_modify_running() {
    std::unique_lock<std::mutex> guard{mtx_};
    cv_.wait_for(guard, std::chrono::seconds(10), [this] { return modify_running_; });
  }
  void release_modify() {
    hold_modify = false;
    cv_.notify_all();
  }
  caf::error validate_mutable(const std::string& volume, const option_map& params) const override {
    for (const auto& [k, v] : params) {
      if (k == "fsType") {
        return make_error(ec::invalid_argument, "volume " + volume + ": \"fsType\" is fixed "
                                                "at creation");
      }
      if (k != "readAheadKB" && k != "directIO") {
        return make_error(ec::invalid_argument, "unknown mutable parameter \"" + k + "\"");
      }
    }
    return {};
  }
  caf::error modify(const volume_record& rec, const modification& m) override {
    ++modifies;
    if (m.bytes != 0) {
      ++expands;
    }
    {
      std::unique_lock<std::mutex> guard{mtx_};
      modify_running_ = true;
      cv_.notify_all();
      cv_.wait_for(guard, std::chrono::seconds(10), [this] { return !hold_modify; });
      modify_running_ = false;
      last_modification_ = m;
    }
    if (cooling_down) {
      return make_error(ec::resource_exhausted, "volume " + rec.name + " was modified recently "
                                                  "and may be modified again in 21600 s");
    }
    if (fail_modify || (m.bytes != 0 && fail_expand)) {
      return make_error(ec::backend_failure, "modify of " + rec.name + " failed: injected");
    }
    if (m.bytes != 0) {
      expanded_to = m.bytes;
    }
    return {};
  }
  caf::expected<uint64_t> grow_filesystem(const volume_record& rec) override {
    ++grows;
    if (fail_grow) {
      return make_error(ec::backend_failure, "grow of " + rec.name + " failed: injected");
    }
    return rec.capacity_bytes;
  }
  /// Total is the record's capacity; a quarter of it used, one inode in ten.
  caf::expected<volume_stats> stats(const volume_record& rec, const std::string& path) override {
    ++stats_calls;
    if (fail_stats) {
      return make_error(ec::backend_failure, "stats of " + rec.name + " at " + path
                                               + " failed: injected");
    }
    volume_stats out;
    out.total_bytes = rec.capacity_bytes;
    out.used_bytes = rec.capacity_bytes / 4;
    out.available_bytes = out.total_bytes - out.used_bytes;
    out.total_inodes = 1000;
    out.used_inodes = 100;
    out.free_inodes = 900;
    out.block = rec.staged_block;
    return out;
  }

  /// Staging paths / publish targets the fake holds now (what the host would show).
  std::set<std::string> staged_paths() {
    std::lock_guard<std::mutex> guard{mtx_};
    return keys(staged_paths_);
  }
  std::set<std::string> targets() {
    std::lock_guard<std::mutex> guard{mtx_};
    return keys(targets_);
  }
  /// The request of the last stage call.
  stage_request last_stage() {
    std::lock_guard<std::mutex> guard{mtx_};
    return last_stage_;
  }
  /// Something that is not any volume's, mounted at `path` (staging or target).
  void make_foreign(const std::string& path) {
    std::lock_guard<std::mutex> guard{mtx_};
    staged_paths_[path] = foreign;
    targets_[path] = foreign;
  }
  static constexpr const char* foreign = "(foreign)";

  /// Lets every hanging call go on.
  void release() {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      hang_unmount = false;
      hang_mount = false;
      hang_remove = false;
      hang_stage = false;
      hang_create = false;
    }
    cv_.notify_all();
  }

private:
  using owners = std::map<std::string, std::string>; ///< path -> the volume it comes from

  static void erase_if_owned(owners& xs, const std::string& path, const std::string& volume) {
    auto it = xs.find(path);
    if (it != xs.end() && it->second == volume) {
      xs.erase(it);
    }
  }
  static std::set<std::string> keys(const owners& xs) {
    std::set<std::string> out;
    for (const auto& [k, v] : xs) {
      out.insert(k);
    }
    return out;
  }

  /// Counts one call in flight for its scope.
  struct flight {
    fake_backend& b;
    explicit flight(fake_backend& owner) : b(owner) {
      auto now = ++b.in_flight;
      auto top = b.max_in_flight.load();
      while (now > top && !b.max_in_flight.compare_exchange_weak(top, now)) {
      }
      if (b.call_ms > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(b.call_ms.load()));
      }
    }
    ~flight() { --b.in_flight; }
  };

  std::mutex mtx_;
  std::condition_variable cv_;
  modification last_modification_;
  bool modify_running_ = false;
  owners staged_paths_;
  owners targets_;
  std::string attached_;
  stage_request last_stage_;
};

/// What the fake persistence keeps; shared with the test.

} // namespace berth::test
