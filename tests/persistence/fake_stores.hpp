#pragma once

// Stores for the actor tests: one counts calls around the real file_store, one fails on demand.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "core/errors.hpp"
#include "persistence/file_store.hpp"

namespace berth::test {

/// A file_store that counts appends and makes each fsync look slower, so that
/// requests pile up while one commit runs.
class counting_store : public store {
public:
  counting_store(std::string dir, std::chrono::milliseconds delay)
    : inner_(std::move(dir)), delay_(delay) {
  }

  caf::expected<state_snapshot> load() override {
    return inner_.load();
  }

  caf::error append(const std::vector<journal_entry>& entries) override {
    {
      std::unique_lock<std::mutex> lock{gate_mtx_};
      if (hold_next_) {
        hold_next_ = false;
        held_ = true;
        gate_cv_.notify_all();
        gate_cv_.wait(lock, [this] { return !held_; });
      }
    }
    ++appends;
    entries_written += entries.size();
    std::this_thread::sleep_for(delay_);
    return inner_.append(entries);
  }

  /// The next append waits inside the store until release(): what the actor receives
  /// meanwhile piles up in its mailbox, without guessing how long an fsync takes.
  void hold_next() {
    std::lock_guard<std::mutex> guard{gate_mtx_};
    hold_next_ = true;
  }

  /// Waits until an append is held.
  void wait_held() {
    std::unique_lock<std::mutex> lock{gate_mtx_};
    gate_cv_.wait(lock, [this] { return held_; });
  }

  /// Lets the held append go on.
  void release() {
    std::lock_guard<std::mutex> guard{gate_mtx_};
    held_ = false;
    gate_cv_.notify_all();
  }

  caf::error compact(const state_snapshot& state) override {
    ++compactions;
    return inner_.compact(state);
  }

  caf::expected<uint64_t> begin_compaction() override {
    return inner_.begin_compaction();
  }

  /// Each snapshot written counts as a compaction; while hold_snapshot() is set, the
  /// write waits inside the store until release_snapshot().
  caf::error write_snapshot(const shared_state& state, uint64_t generation) override {
    {
      std::unique_lock<std::mutex> lock{gate_mtx_};
      if (hold_snapshot_) {
        snapshot_held_ = true;
        gate_cv_.notify_all();
        gate_cv_.wait(lock, [this] { return !hold_snapshot_; });
        snapshot_held_ = false;
      }
    }
    ++compactions;
    return inner_.write_snapshot(state, generation);
  }

  caf::error finish_compaction(uint64_t generation) override {
    return inner_.finish_compaction(generation);
  }

  /// Snapshot writes wait until release_snapshot(): a test sees commits go on meanwhile.
  void hold_snapshot() {
    std::lock_guard<std::mutex> guard{gate_mtx_};
    hold_snapshot_ = true;
  }

  /// Waits until a snapshot write is held.
  void wait_snapshot_held() {
    std::unique_lock<std::mutex> lock{gate_mtx_};
    gate_cv_.wait(lock, [this] { return snapshot_held_; });
  }

  void release_snapshot() {
    std::lock_guard<std::mutex> guard{gate_mtx_};
    hold_snapshot_ = false;
    gate_cv_.notify_all();
  }

  size_t journal_bytes() const override {
    return inner_.journal_bytes();
  }

  std::atomic<size_t> appends{0};
  std::atomic<size_t> entries_written{0};
  std::atomic<size_t> compactions{0};

private:
  file_store inner_;
  std::chrono::milliseconds delay_;
  std::mutex gate_mtx_;
  std::condition_variable gate_cv_;
  bool hold_next_ = false;
  bool held_ = false;
  bool hold_snapshot_ = false;
  bool snapshot_held_ = false;
};

/// A store whose append fails while `failing` is set; it remembers what it was given.
class failing_store : public store {
public:
  caf::expected<state_snapshot> load() override {
    return state_snapshot{};
  }

  caf::error append(const std::vector<journal_entry>& entries) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard<std::mutex> guard{mtx};
    ++appends;
    if (failing) {
      return make_error(ec::persist_failure, "cannot write /fake/journal.log: No space left");
    }
    bytes += entries.size() * 100;
    return {};
  }

  caf::error compact(const state_snapshot& state) override {
    std::lock_guard<std::mutex> guard{mtx};
    compacted.push_back(state);
    bytes = 0;
    return {};
  }

  size_t journal_bytes() const override {
    std::lock_guard<std::mutex> guard{mtx};
    return bytes;
  }

  mutable std::mutex mtx;
  bool failing = true;
  size_t appends = 0;
  size_t bytes = 0;
  std::vector<state_snapshot> compacted;
};

} // namespace berth::test
