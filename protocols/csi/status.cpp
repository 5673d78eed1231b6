#include "protocols/csi/status.hpp"
#include "protocols/csi/counted_reactor.hpp"

#include <caf/atom.hpp>
#include <caf/sec.hpp>

namespace berth::csi {

grpc::StatusCode to_code(ec code) {
  switch (code) {
    case ec::invalid_argument: return grpc::StatusCode::INVALID_ARGUMENT;
    case ec::not_found: return grpc::StatusCode::NOT_FOUND;
    case ec::already_exists: return grpc::StatusCode::ALREADY_EXISTS;
    case ec::in_use: return grpc::StatusCode::FAILED_PRECONDITION;
    case ec::failed_precondition: return grpc::StatusCode::FAILED_PRECONDITION;
    case ec::out_of_range: return grpc::StatusCode::OUT_OF_RANGE;
    case ec::unsupported: return grpc::StatusCode::FAILED_PRECONDITION;
    case ec::resource_exhausted: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ec::timeout: return grpc::StatusCode::DEADLINE_EXCEEDED;
    case ec::unavailable: return grpc::StatusCode::UNAVAILABLE;
    case ec::aborted: return grpc::StatusCode::ABORTED;
    case ec::persist_failure: return grpc::StatusCode::INTERNAL;
    case ec::backend_failure: return grpc::StatusCode::INTERNAL;
    case ec::internal: return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::INTERNAL;
}

grpc::Status to_status(const caf::error& err) {
  if (!err) {
    return grpc::Status::OK;
  }
  auto message = describe(err);
  if (auto code = berth_code(err)) {
    return {to_code(*code), message};
  }
  if (err.category() == caf::atom("system")) {
    switch (static_cast<caf::sec>(err.code())) {
      case caf::sec::request_timeout:
        return {grpc::StatusCode::DEADLINE_EXCEEDED, "berthd did not answer in time: " + message};
      case caf::sec::request_receiver_down:
        return {grpc::StatusCode::UNAVAILABLE, "berthd is stopping: " + message};
      default:
        break;
    }
  }
  return {grpc::StatusCode::INTERNAL, message};
}

grpc::Status invalid_argument(std::string message) {
  return {grpc::StatusCode::INVALID_ARGUMENT, std::move(message)};
}

grpc::Status not_found(std::string message) {
  return {grpc::StatusCode::NOT_FOUND, std::move(message)};
}

std::string_view code_of_status(grpc::StatusCode code) noexcept {
  switch (code) {
    case grpc::StatusCode::OK: return "ok";
    case grpc::StatusCode::INVALID_ARGUMENT: return to_string(ec::invalid_argument);
    case grpc::StatusCode::NOT_FOUND: return to_string(ec::not_found);
    case grpc::StatusCode::ALREADY_EXISTS: return to_string(ec::already_exists);
    case grpc::StatusCode::FAILED_PRECONDITION: return to_string(ec::failed_precondition);
    case grpc::StatusCode::OUT_OF_RANGE: return to_string(ec::out_of_range);
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return to_string(ec::resource_exhausted);
    case grpc::StatusCode::DEADLINE_EXCEEDED: return to_string(ec::timeout);
    case grpc::StatusCode::UNAVAILABLE: return to_string(ec::unavailable);
    case grpc::StatusCode::ABORTED: return to_string(ec::aborted);
    case grpc::StatusCode::UNIMPLEMENTED: return to_string(ec::unsupported);
    case grpc::StatusCode::INTERNAL: return to_string(ec::internal);
    default: return other_label;
  }
}

std::shared_ptr<telemetry> stats_or_private(const std::shared_ptr<telemetry>& stats) {
  static const auto fallback = std::make_shared<telemetry>(std::vector<std::string>{});
  return stats ? stats : fallback;
}

counted_reactor* start(const std::shared_ptr<telemetry>& stats, std::string_view rpc) {
  return new counted_reactor(stats_or_private(stats), rpc);
}

} // namespace berth::csi
