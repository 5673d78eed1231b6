#include "protocols/admin/admin_transfer.hpp"

#include <atomic>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include "protocols/admin/admin_codec.hpp"
#include "protocols/admin/detail/delta_export.hpp"
#include "protocols/admin/detail/delta_import.hpp"
#include "protocols/admin/detail/snapshot_diff.hpp"
#include "protocols/admin/detail/transfer_runs.hpp"

namespace berth {

namespace asio = boost::asio;
using admin::detail::unix_socket;
using boost::system::error_code;

namespace {

constexpr std::string_view volumes_prefix = "/v1/volumes/";
constexpr std::string_view snapshots_prefix = "/v1/snapshots/";

/// The NAME of `prefix`NAME/`action` ("" when `target` is not that), before any query.
std::string name_of(const std::string& target, std::string_view prefix, std::string_view action) {
  std::string_view path{target};
  path = path.substr(0, path.find('?'));
  if (path.substr(0, prefix.size()) != prefix) {
    return {};
  }
  path.remove_prefix(prefix.size());
  auto slash = path.find('/');
  if (slash == std::string_view::npos || path.substr(slash + 1) != action) {
    return {};
  }
  return std::string{path.substr(0, slash)};
}

} // namespace


/// One export or import: its connection, its thread, and its tar while it runs.
struct admin_transfers::stream {
  stream_request req;
  std::thread thread;
  std::atomic<bool> done{false};
  std::mutex mu;
  admin::detail::tar_process* tar = nullptr; ///< under mu: stop() kills it
  bool stopped = false;                      ///< under mu
  bool connected = true; ///< under mu: req.fd is still this stream's (stop() shuts it)

  /// Registers the running tar, or ends it at once when stop() came first.
  void running(admin::detail::tar_process* t) {
    std::lock_guard<std::mutex> lock(mu);
    tar = t;
    if (stopped && t != nullptr) {
      t->kill();
    }
  }
};

admin_transfers::admin_transfers(caf::actor_system& sys, registry_actor registry,
                                 std::shared_ptr<telemetry> stats, config cfg)
  : sys_(sys), registry_(std::move(registry)), stats_(std::move(stats)), cfg_(std::move(cfg)) {
}

admin_transfers::~admin_transfers() {
  stop();
}

bool admin_transfers::routes(const std::string& method, const std::string& target) {
  return (method == "GET" && !name_of(target, volumes_prefix, "export").empty())
    || (method == "POST" && !name_of(target, volumes_prefix, "import").empty())
    || (method == "POST" && !name_of(target, volumes_prefix, "delta").empty())
    || (method == "GET" && !name_of(target, snapshots_prefix, "diff").empty());
}

void admin_transfers::reap_finished() {
  for (auto it = streams_.begin(); it != streams_.end();) {
    if ((*it)->done) {
      (*it)->thread.join();
      it = streams_.erase(it);
    } else {
      ++it;
    }
  }
}

void admin_transfers::take(stream_request request) {
  auto s = std::make_shared<stream>();
  s->req = std::move(request);
  std::lock_guard<std::mutex> lock(mu_);
  reap_finished();
  if (stopping_ || streams_.size() >= cfg_.max_streams) {
    const bool stopping = stopping_;
    // Answered on a thread: a client that does not read must not hold the server's.
    std::thread([fd = s->req.fd, stopping, max = cfg_.max_streams] {
      asio::io_context io;
      unix_socket sock{io};
      error_code err;
      sock.assign(asio::local::stream_protocol{}, fd, err);
      if (err) {
        ::close(fd);
        return;
      }
      timeval limit{5, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
      const std::string busy = std::to_string(max)
        + " exports, imports and snapshot diffs are running, the most "
          "berthd runs at once; retry when one has finished";
      admin::detail::answer(sock, stopping ? 503 : 429,
                            admin::encode_error(stopping ? "berthd is stopping" : busy));
    }).detach();
    return;
  }
  s->thread = std::thread([this, s] {
    serve(s);
    s->done = true;
  });
  streams_.push_back(std::move(s));
}

void admin_transfers::stop() {
  std::vector<std::shared_ptr<stream>> running;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    running.swap(streams_);
  }
  for (auto& s : running) {
    std::lock_guard<std::mutex> lock(s->mu);
    s->stopped = true;
    if (s->tar != nullptr) {
      s->tar->kill();
    }
    if (s->connected) {
      ::shutdown(s->req.fd, SHUT_RDWR); // a blocked read or write returns
    }
  }
  for (auto& s : running) {
    s->thread.join();
  }
}


void admin_transfers::serve(const std::shared_ptr<stream>& s) {
  const auto started = std::chrono::steady_clock::now();
  const auto diffed = name_of(s->req.target, snapshots_prefix, "diff");
  const bool exporting = diffed.empty() && s->req.method == "GET";
  const auto delta_onto = name_of(s->req.target, volumes_prefix, "delta");
  const auto name = !diffed.empty() ? diffed
    : !delta_onto.empty()           ? delta_onto
                          : name_of(s->req.target, volumes_prefix, exporting ? "export" : "import");
  asio::io_context io;
  unix_socket sock{io};
  error_code err;
  sock.assign(asio::local::stream_protocol{}, s->req.fd, err);
  if (err) {
    std::lock_guard<std::mutex> lock(s->mu);
    ::close(s->req.fd);
    s->connected = false;
    return;
  }
  // A client silent for `idle` ends the stream: its read or write fails.
  timeval limit{static_cast<time_t>(cfg_.idle.count()), 0};
  ::setsockopt(s->req.fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(s->req.fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  boost::beast::flat_buffer buf;
  auto space = buf.prepare(s->req.head.size());
  std::memcpy(space.data(), s->req.head.data(), s->req.head.size());
  buf.commit(s->req.head.size());
  admin::detail::transfer t{sys_, registry_, sock, buf};
  auto running = [&s](admin::detail::tar_process* tar) { s->running(tar); };
  caf::error outcome;
  if (!diffed.empty()) {
    outcome = admin::detail::run_diff(t, name, {cfg_.directory, cfg_.backends});
  } else if (exporting && s->req.target.find('?') != std::string::npos) {
    outcome = admin::detail::run_delta_export(t, name, {cfg_.directory, cfg_.backends});
  } else if (exporting) {
    outcome = admin::detail::run_export(t, name, running);
  } else if (!delta_onto.empty()) {
    outcome =
      admin::detail::run_delta_import(t, name, cfg_.imports_dir, {cfg_.directory, cfg_.backends});
  } else {
    outcome = admin::detail::run_import(t, name, cfg_.imports_dir, running);
  }
  auto seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const char* route = !diffed.empty() ? "snapshot_diff"
    : !delta_onto.empty()             ? "import_delta"
    : exporting                       ? "export"
                                      : "import";
  stats_->operations.record("admin", route, code_of(outcome), seconds);
  std::lock_guard<std::mutex> lock(s->mu); // the number is free once closed: stop() must not
  sock.shutdown(unix_socket::shutdown_both, err);
  sock.close(err);
  s->connected = false;
}

} // namespace berth
