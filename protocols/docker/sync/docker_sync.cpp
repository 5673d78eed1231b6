#include "protocols/docker/sync/docker_sync.hpp"

#include <spdlog/spdlog.h>

#include "core/errors.hpp"

namespace berth::docker_sync {

namespace {

/// The API the follower uses, reporting a failed events stream (dockerd went away).
class watched_api final : public docker_engine::engine_api {
public:
  watched_api(docker_engine::engine_api& inner, std::function<void()> on_down)
    : inner_(inner), on_down_(std::move(on_down)) {
  }
  std::string describe() const override {
    return inner_.describe();
  }
  caf::expected<docker_engine::ping_reply> ping() override {
    return inner_.ping();
  }
  caf::expected<docker_engine::engine_info> info() override {
    return inner_.info();
  }
  caf::expected<docker_engine::container_list> containers() override {
    return inner_.containers();
  }
  caf::expected<docker_engine::events_end> events(const docker_engine::event_handler& h,
                                                  docker_engine::stop_signal& stop,
                                                  int64_t since_nano) override {
    auto end = inner_.events(h, stop, since_nano);
    if (!end) {
      on_down_();
    }
    return end;
  }

private:
  docker_engine::engine_api& inner_;
  std::function<void()> on_down_;
};

} // namespace

docker_sync::docker_sync(sync_config cfg) : cfg_(std::move(cfg)) {
  stop_ = cfg_.stop ? cfg_.stop : std::make_shared<docker_engine::stop_signal>();
  auto stop = stop_;
  cfg_.driver.stopping = [stop] { return stop->stop_requested(); };
  driver_ = std::make_unique<release_driver>(cfg_.driver);
}

docker_sync::~docker_sync() {
  stop();
}

void docker_sync::start() {
  if (cfg_.driver.api) {
    spdlog::info("reconciling Docker mount IDs with dockerd at {} (die grace {} ms)",
                 cfg_.driver.api->describe(), cfg_.driver.die_grace.count());
  } else {
    spdlog::info("Docker mount IDs are not reconciled with dockerd (--docker-api is empty); "
                 "berthctl release still drops an ID, unchecked");
  }
  post({[](release_driver& d, release_clock::time_point now) { d.started(now); }, {}});
  worker_ = std::thread{[this] { run_worker(); }};
  if (cfg_.driver.api) {
    follower_ = std::thread{[this] { run_follower(); }};
  }
}

void docker_sync::stop() {
  stop_->request_stop();
  {
    std::lock_guard<std::mutex> lock{mutex_};
    stopping_ = true;
  }
  cv_.notify_all();
  if (follower_.joinable()) {
    follower_.join();
  }
  if (worker_.joinable()) {
    worker_.join();
  }
}

void docker_sync::post(job j) {
  // Called by the follower; after stop() nothing runs any more.
  {
    std::lock_guard<std::mutex> lock{mutex_};
    jobs_.push_back(std::move(j));
  }
  cv_.notify_all();
}

void docker_sync::release(std::string volume, std::string id, done_fn done) {
  auto aborted = [volume, id, done] {
    done(make_error(ec::aborted, "berthd is stopping: mount ID " + id + " of volume " + volume
                                   + " was not released; try again once it runs"));
  };
  job j{[volume, id, done](release_driver& d, release_clock::time_point now) {
          done(d.operator_release(volume, id, now));
        },
        aborted};
  {
    std::lock_guard<std::mutex> lock{mutex_};
    if (!stopping_) {
      jobs_.push_back(std::move(j));
      cv_.notify_all();
      return;
    }
  }
  aborted();
}

void docker_sync::run_worker() {
  std::unique_lock<std::mutex> lock{mutex_};
  std::deque<job> unrun;
  while (true) {
    auto wake = driver_->next_wakeup();
    auto ready = [&] { return stopping_ || !jobs_.empty(); };
    if (wake) {
      // The rules' clock may be a test's: wait for the time left on it.
      auto left = *wake - cfg_.now();
      cv_.wait_for(lock, std::max(left, release_clock::duration::zero()), ready);
    } else {
      cv_.wait(lock, ready);
    }
    if (stopping_) {
      break;
    }
    std::deque<job> batch;
    batch.swap(jobs_);
    lock.unlock();
    while (!batch.empty() && !stop_->stop_requested()) {
      auto j = std::move(batch.front());
      batch.pop_front();
      j.run(*driver_, cfg_.now());
    }
    if (!stop_->stop_requested()) {
      driver_->settle(cfg_.now());
      driver_->tick(cfg_.now());
    }
    lock.lock();
    for (auto& j : batch) { // left by a stop: answered below
      unrun.push_back(std::move(j));
    }
  }
  for (auto& j : jobs_) {
    unrun.push_back(std::move(j));
  }
  jobs_.clear();
  lock.unlock();
  for (auto& j : unrun) {
    if (j.drop) {
      j.drop();
    }
  }
}

void docker_sync::run_follower() {
  watched_api api{*cfg_.driver.api, [this] {
                    post({[](release_driver& d, release_clock::time_point) { d.down(); }, {}});
                  }};
  docker_engine::follow_handler h;
  h.on_open = [this](const docker_engine::engine_instance& who, bool) {
    post({[who](release_driver& d, release_clock::time_point now) { d.opened(who, now); }, {}});
  };
  h.on_event = [this](const docker_engine::container_event& ev) {
    if (ev.action != "die" && ev.action != "destroy") {
      return;
    }
    post({[ev](release_driver& d, release_clock::time_point now) { d.event(ev, now); }, {}});
  };
  docker_engine::follow_events(api, h, *stop_, cfg_.follow);
}

} // namespace berth::docker_sync
