#pragma once

// The committed record of one volume: what is durable, and the only record a request is
// judged against. Only commit() and forget() change it, and they run only once the
// change is durable (the engine's persist step); everything else reads it. Each change
// moves the volume gauges (telemetry's volume_gauges) from the old record to the new,
// so the gauges always equal a recount over the records.

#include "core/telemetry/telemetry.hpp"
#include "core/volume_record.hpp"

namespace berth {

class committed_record {
public:
  committed_record() = default;

  /// `rec`, loaded from the durable state (`exists`) or the name of a volume not created
  /// yet, counted in `gauges` while it exists.
  committed_record(volume_record rec, bool exists, volume_gauges& gauges)
      : rec_(std::move(rec)), exists_(exists), gauges_(&gauges) {
    if (exists_) {
      gauges_->replace(nullptr, &rec_);
    }
  }

  const volume_record& operator*() const { return rec_; }
  const volume_record* operator->() const { return &rec_; }

  /// Created and durable, not removed.
  bool exists() const { return exists_; }

  /// `next` is durable: it is the committed record (`creates`: the volume exists from
  /// now on).
  void commit(volume_record next, bool creates = false) {
    bool existed = exists_;
    exists_ = existed || creates;
    gauges_->replace(existed ? &rec_ : nullptr, exists_ ? &next : nullptr);
    rec_ = std::move(next);
  }

  /// The volume's erasure is durable: it holds no record from now on, only its name.
  void forget() {
    if (exists_) {
      gauges_->replace(&rec_, nullptr);
    }
    auto name = std::move(rec_.name);
    exists_ = false;
    rec_ = volume_record{};
    rec_.name = std::move(name);
  }

private:
  volume_record rec_;
  bool exists_ = false;
  volume_gauges* gauges_ = nullptr; ///< berthd's, which outlives every volume
};

} // namespace berth
