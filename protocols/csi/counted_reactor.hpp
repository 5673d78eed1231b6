#pragma once

// The reactor of every CSI RPC: it finishes the call as gRPC's default reactor does
// and counts it once in telemetry::operations ("csi", the RPC's name, the outcome's
// code, arrival to answer). Every way an RPC ends goes through its Finish() or fail().

#include <chrono>
#include <memory>
#include <string_view>

#include <grpcpp/grpcpp.h>

#include "core/telemetry/telemetry.hpp"
#include "protocols/csi/status.hpp"

namespace berth::csi {

/// The `code` label of a status the adapter made itself (a refusal of the codec):
/// the berth code that maps to it (status.hpp), "ok", or "other". UNIMPLEMENTED is
/// "unsupported"; INTERNAL "internal".
std::string_view code_of_status(grpc::StatusCode code) noexcept;

/// A unary reactor that counts its RPC when it finishes; it deletes itself when
/// gRPC is done with it.
class counted_reactor final : public grpc::ServerUnaryReactor {
public:
  /// @param rpc a static string, the RPC's name ("NodeStageVolume").
  counted_reactor(std::shared_ptr<telemetry> stats, std::string_view rpc)
    : stats_(std::move(stats)), rpc_(rpc), arrived_(std::chrono::steady_clock::now()) {
  }

  /// Finishes with a status the adapter made (hides the base's, which would not count).
  void Finish(grpc::Status st) {
    count(code_of_status(st.error_code()));
    grpc::ServerUnaryReactor::Finish(std::move(st));
  }

  /// Finishes with an actor's error, counted by code_of(err), mapped by to_status().
  void fail(const caf::error& err) {
    count(code_of(err));
    grpc::ServerUnaryReactor::Finish(to_status(err));
  }

  void OnDone() override {
    delete this;
  }

private:
  void count(std::string_view code) {
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - arrived_;
    stats_->operations.record("csi", rpc_, code, took.count());
  }

  std::shared_ptr<telemetry> stats_;
  std::string_view rpc_;
  std::chrono::steady_clock::time_point arrived_;
};

/// `stats`, or when null a private telemetry (tests that do not look).
std::shared_ptr<telemetry> stats_or_private(const std::shared_ptr<telemetry>& stats);

/// The reactor of one RPC named `rpc` (a static string); `stats` null: a private one.
counted_reactor* start(const std::shared_ptr<telemetry>& stats, std::string_view rpc);

} // namespace berth::csi
