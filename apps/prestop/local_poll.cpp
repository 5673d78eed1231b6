#include "apps/prestop/local_poll.hpp"

#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "protocols/http/unix_http_client.hpp"

namespace berth::drain {

namespace {

bool same(const std::vector<busy_volume>& a, const std::vector<busy_volume>& b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].staged != b[i].staged || a[i].targets != b[i].targets) {
      return false;
    }
  }
  return true;
}

} // namespace

std::string describe(const std::vector<busy_volume>& busy) {
  std::string out;
  for (const auto& v : busy) {
    out += (out.empty() ? "" : ", ") + v.describe();
  }
  return out.empty() ? "none" : out;
}

void poll_local(const std::string& admin_socket, const std::shared_ptr<detail::wait_state>& st,
                std::chrono::steady_clock::time_point deadline,
                std::chrono::milliseconds period) {
  using clock = std::chrono::steady_clock;
  unix_http_client admin{admin_socket};
  bool warned = false;
  for (;;) {
    uint64_t seen_gen = 0;
    {
      std::lock_guard<std::mutex> guard{st->mtx};
      if (st->stop || clock::now() >= deadline) {
        return;
      }
      seen_gen = st->attachments_gen;
    }
    auto busy = busy_volumes(admin);
    std::unique_lock<std::mutex> lock{st->mtx};
    if (busy) {
      if (warned) {
        spdlog::info("prestop: berthd's admin API at {} answers again", admin_socket);
        warned = false;
      }
      if (st->local_known && !same(st->busy, *busy)) {
        if (busy->empty()) {
          spdlog::info("prestop: berthd has no volume staged or published any more");
        } else {
          spdlog::info("prestop: berthd has {} staged or published: {}",
                       busy->size() == 1 ? "1 volume" : std::to_string(busy->size()) + " volumes",
                       describe(*busy));
        }
      }
      st->busy = std::move(*busy);
      st->local_known = true;
      st->local_error.clear();
    } else {
      // Unknown is not clear: a berthd that does not answer may still hold volumes.
      st->local_known = false;
      st->local_error = berth::describe(busy.error());
      if (!warned) {
        spdlog::warn("prestop: berthd's admin API does not answer ({}); counting its volumes as "
                     "still staged and asking again every {} ms until the deadline",
                     st->local_error, period.count());
        warned = true;
      }
    }
    st->cv.notify_all();
    st->sleep_until(lock, std::min(clock::now() + period, deadline), &st->attachments_gen,
                    seen_gen);
  }
}

} // namespace berth::drain
