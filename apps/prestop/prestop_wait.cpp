#include "apps/prestop/prestop_wait.hpp"

#include <algorithm>
#include <optional>
#include <thread>

#include <spdlog/spdlog.h>

#include "apps/prestop/attachment_watch.hpp"
#include "apps/prestop/detail/wait_state.hpp"
#include "apps/prestop/drain_rules.hpp"
#include "apps/prestop/local_poll.hpp"
#include "core/errors.hpp"
#include "core/retry.hpp"

namespace berth::drain {

namespace {

using clock = std::chrono::steady_clock;

double seconds(clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

/// Reads the Node, retrying with backoff until the deadline.
std::optional<kube::node_info> read_node(kube::kube_api& api, const std::string& name,
                                         clock::time_point deadline, std::string& last_error) {
  failure_log flog;
  backoff delay;
  const std::string what = "reading node " + name;
  for (;;) {
    auto node = api.get_node(name, deadline);
    if (node) {
      flog.succeeded(what);
      return std::move(*node);
    }
    last_error = berth::describe(node.error());
    auto now = clock::now();
    if (now >= deadline) {
      return std::nullopt;
    }
    flog.failed(what, node.error());
    std::this_thread::sleep_for(std::min<clock::duration>(delay.next(), deadline - now));
    if (clock::now() >= deadline) {
      return std::nullopt;
    }
  }
}

/// Starts `fn` on a detached thread counted in st->workers.
template <class F>
void start_worker(const std::shared_ptr<detail::wait_state>& st, F fn) {
  {
    std::lock_guard<std::mutex> guard{st->mtx};
    ++st->workers;
  }
  std::thread{[st, fn = std::move(fn)] {
    fn();
    std::lock_guard<std::mutex> guard{st->mtx};
    --st->workers;
    st->cv.notify_all();
  }}.detach();
}

std::string count(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

/// What still holds the node, and what already does not, as two lists of phrases:
/// {"2 VolumeAttachments of D (a (volume v), b (volume w))"}, {"nothing staged or published here"}.
void picture(const detail::wait_state& st, const prestop_config& cfg,
             std::vector<std::string>& holding, std::vector<std::string>& free) {
  if (!st.listed) {
    holding.push_back("the VolumeAttachments of " + cfg.driver + " (not listed yet"
                      + (st.kube_error.empty() ? "" : ": " + st.kube_error) + ")");
  } else if (st.attachments.empty()) {
    free.push_back("no VolumeAttachment of " + cfg.driver + " for it");
  } else {
    std::string names;
    for (const auto& [name, a] : st.attachments) {
      names += (names.empty() ? "" : ", ") + describe(a);
    }
    holding.push_back(count(st.attachments.size(), "VolumeAttachment", "VolumeAttachments")
                      + " of " + cfg.driver + " (" + names + ")");
  }
  if (!st.local_known) {
    holding.push_back("berthd's volumes (its admin API has not answered"
                      + (st.local_error.empty() ? "" : ": " + st.local_error) + ")");
  } else if (st.busy.empty()) {
    free.push_back("nothing staged or published here");
  } else {
    holding.push_back(count(st.busy.size(), "staged or published volume",
                            "staged or published volumes")
                      + " (" + describe(st.busy) + ")");
  }
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) {
    out += (out.empty() ? "" : sep) + p;
  }
  return out;
}

bool clear(const detail::wait_state& st) {
  return st.listed && st.attachments.empty() && st.local_known && st.busy.empty();
}

void log_deadline(const detail::wait_state& st, const prestop_config& cfg) {
  spdlog::warn("prestop: deadline of {} s reached on node {}; returning with the node still held",
               seconds(cfg.deadline), cfg.node);
  if (!st.listed) {
    spdlog::warn("prestop: the VolumeAttachments of {} could not be listed (last error: {})",
                 cfg.driver, st.kube_error.empty() ? "none" : st.kube_error);
  }
  for (const auto& [name, a] : st.attachments) {
    spdlog::warn("prestop: VolumeAttachment {} of {} for node {} is still present", describe(a),
                 cfg.driver, cfg.node);
  }
  if (!st.local_known) {
    spdlog::warn("prestop: berthd's admin API at {} did not answer (last error: {}); whether "
                 "volumes are still staged or published is unknown",
                 cfg.admin_socket, st.local_error.empty() ? "none" : st.local_error);
  } else if (!st.busy.empty()) {
    spdlog::warn("prestop: berthd still has {}: {}",
                 count(st.busy.size(), "volume staged or published", "volumes staged or published"),
                 describe(st.busy));
  }
}

} // namespace

prestop_outcome wait_for_drain(const prestop_config& cfg, std::shared_ptr<kube::kube_api> api) {
  auto start = clock::now();
  auto deadline = start + cfg.deadline;
  prestop_outcome out;
  std::string node_error;
  auto node = read_node(*api, cfg.node, deadline, node_error);
  if (!node) {
    spdlog::warn("prestop: could not read node {} from the Kubernetes API within the deadline "
                 "of {} s (last error: {}); returning without knowing whether it is drained",
                 cfg.node, seconds(cfg.deadline), node_error);
    return out;
  }
  auto verdict = judge_node(*node);
  out.reason = verdict.reason;
  if (!verdict.draining) {
    spdlog::info("prestop: node {} is not being drained ({}); returning at once", cfg.node,
                 verdict.reason);
    out.result = prestop_result::not_draining;
    return out;
  }
  auto st = std::make_shared<detail::wait_state>();
  watch_target target{cfg.node, cfg.driver, deadline, cfg.page_limit, cfg.min_watch};
  start_worker(st, [api, st, target] { watch_attachments(api, st, target); });
  start_worker(st, [st, socket = cfg.admin_socket, deadline, period = cfg.local_period] {
    poll_local(socket, st, deadline, period);
  });

  std::unique_lock<std::mutex> lock{st->mtx};
  // One line with the whole picture: wait briefly for the first LIST and berthd's answer.
  st->cv.wait_until(lock, std::min(deadline, clock::now() + std::chrono::seconds{2}),
                    [&] { return st->listed && st->local_known; });
  std::vector<std::string> holding;
  std::vector<std::string> free;
  picture(*st, cfg, holding, free);
  if (holding.empty()) {
    spdlog::info("prestop: node {} is being drained ({}); {}", cfg.node, verdict.reason,
                 join(free, " and "));
  } else {
    spdlog::info("prestop: node {} is being drained ({}); waiting for {}{}, deadline {} s",
                 cfg.node, verdict.reason, join(holding, " and "),
                 free.empty() ? "" : " (" + join(free, "; ") + ")", seconds(cfg.deadline));
  }
  bool done = st->cv.wait_until(lock, deadline, [&] { return clear(*st); });
  out.listed = st->listed;
  out.local_known = st->local_known;
  for (const auto& [name, a] : st->attachments) {
    out.attachments.push_back(a);
  }
  out.busy = st->busy;
  if (done) {
    out.result = prestop_result::drained;
    spdlog::info("prestop: node {} is clear: no VolumeAttachment of {} remains for it and berthd "
                 "has nothing staged or published; returning after {:.1f} s",
                 cfg.node, cfg.driver, seconds(clock::now() - start));
  } else {
    out.result = prestop_result::deadline;
    log_deadline(*st, cfg);
  }
  st->stop = true;
  st->cv.notify_all();
  // Workers idle in a sleep leave at once; one blocked in a call leaves by the deadline.
  st->cv.wait_for(lock, std::chrono::milliseconds{50}, [&] { return st->workers == 0; });
  return out;
}

} // namespace berth::drain
