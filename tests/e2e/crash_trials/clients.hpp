#pragma once

// The crash trials' clients of berthd: the Docker plugin socket and the admin socket
// (protocols/http/unix_http_client) and the CSI socket (berth-bench's gRPC client).
// Each call ends in one of three outcomes, which is all the model needs to know.

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "apps/bench/csi_client.hpp"
#include "protocols/http/unix_http_client.hpp"

namespace berth::crash_trials {

enum class outcome {
  done,    ///< answered with success: it happened
  refused, ///< answered with an error: nothing happened (all or nothing)
  unknown, ///< no answer (berthd died, or the transport failed): it may have happened
};

/// The deadline of every call: a stage formats a filesystem on a loaded machine.
inline constexpr auto call_timeout = std::chrono::seconds(60);

/// One outcome and what berthd said.
struct answer {
  outcome result = outcome::unknown;
  std::string detail; ///< the error, or the body of a success

  bool done() const {
    return result == outcome::done;
  }
};

/// The Docker plugin socket: VolumeDriver.* with a JSON body.
class plugin_client {
public:
  explicit plugin_client(const std::string& socket);
  answer call(const std::string& endpoint, const std::string& body);

private:
  std::unique_ptr<unix_http_client> http_;
};

/// The admin socket (GET /v1/..., POST /v1/volumes/NAME/ACTION).
class admin_client {
public:
  explicit admin_client(const std::string& socket);
  answer get(const std::string& target);
  answer post(const std::string& target, const std::string& body);

private:
  std::unique_ptr<unix_http_client> http_;
};

/// The CSI socket: berth-bench's client, one channel of its own per client.
using bench::csi_client;
using bench::mount_capability;

/// The outcome of a finished RPC. Only the transport's codes leave it unknown: every
/// code berthd answers with is an answer.
answer outcome_of(const grpc::Status& st);

/// Runs one RPC with call_timeout.
template <class Stub, class Req, class Resp>
answer rpc(Stub& stub, grpc::Status (Stub::*fn)(grpc::ClientContext*, const Req&, Resp*),
           const Req& req, Resp& resp) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + call_timeout);
  return outcome_of((stub.*fn)(&ctx, req, &resp));
}

/// `s` as a JSON string literal.
std::string json_string(const std::string& s);

} // namespace berth::crash_trials
