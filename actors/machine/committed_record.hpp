#pragma once

// The committed record of one volume: what is durable, and the only record a request is
// judged against. Only commit() and forget() change it, and they run only once the
// change is durable (the engine's persist step); everything else reads it. Each change
// moves the volume gauges (telemetry's volume_gauges) from the old record to the new,
// so the gauges always equal a recount over the records, and puts the new one in the
// record directory, where lists read it.

#include <memory>

#include "core/record_directory.hpp"
#include "core/telemetry/telemetry.hpp"
#include "core/volume_record.hpp"

namespace berth {

class committed_record {
public:
  committed_record() = default;

  /// `rec`, loaded from the durable state (`exists`) or the name of a volume not created
  /// yet, counted in `gauges` and listed in `directory` (if any) while it exists. Shared,
  /// not copied: the registry lists a loaded record before its volume first runs, and
  /// both hold that one (docs/benchmarks.md, "Restart with 10,000 volumes: fewer mount
  /// table reads, one copy of each record").
  /// `counted`: `gauges` count the loaded record already (a dormant volume woken).
  committed_record(shared_record rec, bool exists, volume_gauges& gauges,
                   record_directory* directory = nullptr, bool counted = false)
      : rec_(std::move(rec)), exists_(exists), gauges_(&gauges), directory_(directory) {
    if (exists_) {
      if (!counted) {
        gauges_->replace(nullptr, rec_.get());
      }
      list();
    }
  }

  const volume_record& operator*() const { return *rec_; }
  const volume_record* operator->() const { return rec_.get(); }
  /// The record itself, shared: it is never changed in place.
  const shared_record& shared() const { return rec_; }

  /// Created and durable, not removed.
  bool exists() const { return exists_; }

  /// `next` is durable: it is the committed record (`creates`: the volume exists from
  /// now on). The one the store holds, shared: never changed in place, since a list or
  /// the store may still hold the old one.
  void commit(shared_record next, bool creates = false) {
    bool existed = exists_;
    exists_ = existed || creates;
    gauges_->replace(existed ? rec_.get() : nullptr, exists_ ? next.get() : nullptr);
    rec_ = std::move(next);
    if (exists_) {
      list();
    }
  }

  void commit(volume_record next, bool creates = false) {
    commit(std::make_shared<const volume_record>(std::move(next)), creates);
  }

  /// The volume's erasure is durable: it holds no record from now on, only its name.
  void forget() {
    if (exists_) {
      gauges_->replace(rec_.get(), nullptr);
      if (directory_ != nullptr) {
        directory_->erase(rec_->name);
      }
    }
    volume_record named;
    named.name = rec_->name;
    exists_ = false;
    rec_ = std::make_shared<const volume_record>(std::move(named));
  }

private:
  void list() {
    if (directory_ != nullptr) {
      directory_->put(rec_);
    }
  }

  shared_record rec_ = std::make_shared<const volume_record>();
  bool exists_ = false;
  volume_gauges* gauges_ = nullptr;       ///< berthd's, which outlives every volume
  record_directory* directory_ = nullptr; ///< the registry's, which outlives its volumes
};

} // namespace berth
