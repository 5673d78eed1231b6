// berth-bench csi-burst: what the coalescing mailbox makes of a burst (docs/design.md,
// "Expand and modify coalesce into one call").
//
//   setup:   CreateVolume <prefix>-burst-<pid> on the block backend (--size-mb); read
//            its "modifications" from berthd's admin API (GET /v1/volumes/NAME)
//   round r: K clients, each on its own warm connection, are released at once:
//            even clients ControllerExpandVolume to size_mb + (r+1)*step_mb (all the
//            same size), odd ones ControllerModifyVolume {parameter: 128*(r+2)} (all
//            the same value); every call is timed; then "modifications" is read again:
//            after - before = backend calls of this burst
//   teardown: DeleteVolume
//
// With the window on, a burst that fits in it costs one backend call; with it off
// (--coalesce-window-ms 0), one per distinct change, or cooldown refusals.
// Readable lines, then one JSON object as the last line (burst_json).

#include <cinttypes>
#include <cstdio>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "apps/bench/common.hpp"
#include "apps/bench/csi_burst.hpp"
#include "apps/bench/csi_client.hpp"
#include "core/errors.hpp"
#include "core/record_json.hpp"
#include "protocols/http/unix_http_client.hpp"

namespace berth::bench {

namespace {

namespace v1 = ::csi::v1;

/// The volume's "modifications" as berthctl inspect --json shows it; an error names
/// what went wrong.
caf::expected<uint64_t> read_modifications(unix_http_client& admin, const std::string& name) {
  auto res = admin.get("/v1/volumes/" + name);
  if (!res) {
    return res.error();
  }
  if (res->status != 200) {
    return make_error(ec::unavailable, "admin API: GET /v1/volumes/" + name + " answered "
                                         + std::to_string(res->status) + ": " + res->body);
  }
  auto rec = record_from_json(res->body);
  if (!rec) {
    return rec.error();
  }
  return rec->modifications;
}

/// True when ControllerGetCapabilities offers `cap`.
bool offers(const v1::ControllerGetCapabilitiesResponse& caps,
            v1::ControllerServiceCapability::RPC::Type cap) {
  for (const auto& c : caps.capabilities()) {
    if (c.rpc().type() == cap) {
      return true;
    }
  }
  return false;
}

/// What one client's call in one round gave.
struct call_outcome {
  bool ok = false;
  double ms = 0;
};

} // namespace

int run_csi_burst(const burst_options& opt) {
  // -- check the endpoint and the admin socket ------------------------------------------
  v1::ControllerGetCapabilitiesResponse caps;
  if (!controller_capabilities(opt.endpoint, caps)) {
    return 1;
  }
  using rpc_type = v1::ControllerServiceCapability::RPC;
  for (auto [cap, what] : {std::pair{rpc_type::EXPAND_VOLUME, "EXPAND_VOLUME"},
                           std::pair{rpc_type::MODIFY_VOLUME, "MODIFY_VOLUME"}}) {
    if (!offers(caps, cap)) {
      std::fprintf(stderr,
                   "berth-bench: %s does not offer the controller capability %s; csi-burst "
                   "needs ControllerExpandVolume and ControllerModifyVolume\n",
                   opt.endpoint.c_str(), what);
      return 1;
    }
  }
  unix_http_client admin(opt.admin_socket);
  if (auto res = admin.get("/v1/volumes"); !res || res->status != 200) {
    std::fprintf(stderr,
                 "berth-bench: berthd's admin API at %s does not answer (%s); give its "
                 "socket with --admin-socket (berthd --admin-socket)\n",
                 opt.admin_socket.c_str(),
                 res ? ("HTTP " + std::to_string(res->status)).c_str()
                     : describe(res.error()).c_str());
    return 1;
  }

  // -- setup: one volume, K warm connections ---------------------------------------------
  csi_client probe(opt.endpoint);
  auto name = opt.prefix + "-burst-" + std::to_string(::getpid());
  v1::CreateVolumeResponse created;
  auto err = rpc(*probe.controller, &v1::Controller::Stub::CreateVolume,
                 create_request(name, static_cast<int64_t>(opt.size_mb) << 20, "block"), created);
  if (!err.empty()) {
    std::fprintf(stderr, "berth-bench: CreateVolume %s failed: %s\n", name.c_str(), err.c_str());
    return 1;
  }
  auto id = created.volume().volume_id();
  std::vector<std::unique_ptr<csi_client>> clients;
  for (long k = 0; k < opt.clients; ++k) {
    clients.push_back(std::make_unique<csi_client>(opt.endpoint));
    clients.back()->channel->WaitForConnected(std::chrono::system_clock::now()
                                              + std::chrono::seconds(10));
  }
  long expanders = (opt.clients + 1) / 2;
  std::printf("csi-burst: %s, volume %s, %ld clients (%ld expand, %ld modify %s), %ld rounds\n",
              opt.endpoint.c_str(), id.c_str(), opt.clients, expanders, opt.clients - expanders,
              opt.parameter.c_str(), opt.rounds);

  // -- the rounds --------------------------------------------------------------------------
  error_log errors;
  burst_result result;
  for (long round = 0; round < opt.rounds; ++round) {
    auto before = read_modifications(admin, id);
    if (!before) {
      errors.add("round " + std::to_string(round + 1) + ": reading modifications before: "
                 + describe(before.error()));
    }
    auto size = burst_size_bytes(opt, round);
    auto value = burst_parameter_value(round);
    std::vector<call_outcome> outcomes(static_cast<size_t>(opt.clients));
    std::promise<void> go;
    std::shared_future<void> start = go.get_future().share();
    std::vector<std::thread> threads;
    for (long k = 0; k < opt.clients; ++k) {
      threads.emplace_back([&, k] {
        auto& c = *clients[static_cast<size_t>(k)];
        start.wait();
        std::string what;
        auto t0 = bench_clock::now();
        if (burst_client_expands(k)) {
          v1::ControllerExpandVolumeRequest req;
          req.set_volume_id(id);
          req.mutable_capacity_range()->set_required_bytes(static_cast<int64_t>(size));
          *req.mutable_volume_capability() = mount_capability();
          v1::ControllerExpandVolumeResponse resp;
          what = rpc(*c.controller, &v1::Controller::Stub::ControllerExpandVolume, req, resp);
          if (what.empty() && static_cast<uint64_t>(resp.capacity_bytes()) < size) {
            what = "answered capacity " + std::to_string(resp.capacity_bytes())
                   + " below the " + std::to_string(size) + " asked";
          }
          what = what.empty() ? what : "ControllerExpandVolume " + id + ": " + what;
        } else {
          v1::ControllerModifyVolumeRequest req;
          req.set_volume_id(id);
          (*req.mutable_mutable_parameters())[opt.parameter] = value;
          v1::ControllerModifyVolumeResponse resp;
          what = rpc(*c.controller, &v1::Controller::Stub::ControllerModifyVolume, req, resp);
          what = what.empty() ? what : "ControllerModifyVolume " + id + ": " + what;
        }
        auto& out = outcomes[static_cast<size_t>(k)];
        out.ms = elapsed_ms(t0, bench_clock::now());
        out.ok = what.empty();
        if (!out.ok) {
          errors.add("round " + std::to_string(round + 1) + ": " + what);
        }
      });
    }
    go.set_value();
    for (auto& th : threads) {
      th.join();
    }
    auto after = read_modifications(admin, id);
    if (!after) {
      errors.add("round " + std::to_string(round + 1) + ": reading modifications after: "
                 + describe(after.error()));
    }
    latency_recorder round_latency;
    uint64_t round_errors = 0;
    for (long k = 0; k < opt.clients; ++k) {
      const auto& out = outcomes[static_cast<size_t>(k)];
      if (!out.ok) {
        ++round_errors;
        continue;
      }
      round_latency.add(out.ms);
      (burst_client_expands(k) ? result.expand : result.modify).add(out.ms);
    }
    result.latency.merge(round_latency);
    std::string calls = "?";
    if (before && after) {
      result.backend_calls.push_back(*after - *before);
      calls = std::to_string(*after - *before);
    }
    std::printf("round %ld: size %" PRIu64 " MiB, %s=%s: %s backend calls, %" PRIu64
                " errors, p50 %.3f ms, max %.3f ms\n",
                round + 1, size >> 20, opt.parameter.c_str(), value.c_str(), calls.c_str(),
                round_errors, round_latency.percentile(50), round_latency.max());
  }

  // -- teardown ----------------------------------------------------------------------------
  v1::DeleteVolumeRequest del;
  del.set_volume_id(id);
  v1::DeleteVolumeResponse deleted;
  if (auto e = rpc(*probe.controller, &v1::Controller::Stub::DeleteVolume, del, deleted);
      !e.empty()) {
    errors.add("DeleteVolume " + id + ": " + e);
  }

  // -- report --------------------------------------------------------------------------
  result.errors = errors.count();
  std::printf("expand: calls=%zu p50=%.3f ms p99=%.3f ms max=%.3f ms\n", result.expand.count(),
              result.expand.percentile(50), result.expand.percentile(99), result.expand.max());
  std::printf("modify: calls=%zu p50=%.3f ms p99=%.3f ms max=%.3f ms\n", result.modify.count(),
              result.modify.percentile(50), result.modify.percentile(99), result.modify.max());
  std::printf("errors: %" PRIu64 "\n", result.errors);
  std::printf("%s\n", burst_json(opt, result).c_str());
  std::fflush(stdout);
  return result.errors == 0 ? 0 : 2;
}

} // namespace berth::bench
