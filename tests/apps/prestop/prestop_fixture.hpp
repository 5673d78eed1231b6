#pragma once

// What the prestop tests share: the fake Kubernetes API, a stand-in of berthd's admin
// API (a real unix_http_server answering GET /v1/volumes with records the test sets),
// and the hook's log captured for assertions.

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "apps/prestop/prestop_wait.hpp"
#include "core/record_json.hpp"
#include "protocols/http/unix_http_server.hpp"
#include "tests/apps/prestop/fake_kube.hpp"
#include "tests/protocols/test_util.hpp"

namespace berth::test {

/// Keeps every formatted line; text() may be read while others log.
class capture_sink : public spdlog::sinks::base_sink<std::mutex> {
public:
  std::string text() {
    std::lock_guard<std::mutex> guard{mutex_};
    return text_;
  }

  /// Waits until `needle` has been logged; false after `timeout`.
  bool wait_for(const std::string& needle, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock{mutex_};
    return logged_.wait_for(lock, timeout, [&] { return text_.find(needle) != std::string::npos; });
  }

protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    text_.append(buf.data(), buf.size());
    logged_.notify_all();
  }
  void flush_() override {
  }

private:
  std::string text_;
  std::condition_variable logged_;
};

/// berthd's admin API as far as the hook reads it.
class admin_stand_in {
public:
  explicit admin_stand_in(const std::string& path)
    : srv_(io_.io,
           [this](const std::string&, const std::string& target, std::string, reply_fn reply,
                  const caller&) {
             if (target != "/v1/volumes") {
               reply(404, "application/json", R"({"error":"not served"})");
               return;
             }
             std::string body = "[";
             std::lock_guard<std::mutex> guard{mtx_};
             ++requests_;
             times_.push_back(std::chrono::steady_clock::now());
             for (const auto& rec : records_) {
               body += (body.size() > 1 ? "," : "") + record_to_json(rec, record_shape::full);
             }
             reply(200, "application/json", body + "]");
             asked_.notify_all();
           },
           1 << 16, "admin-stand-in") {
    EXPECT_FALSE(srv_.listen(path));
  }

  ~admin_stand_in() {
    srv_.stop();
    io_.stop();
  }

  /// Returns how many requests were answered before the change.
  int set(std::vector<volume_record> recs) {
    std::lock_guard<std::mutex> guard{mtx_};
    records_ = std::move(recs);
    return requests_;
  }

  int requests() {
    std::lock_guard<std::mutex> guard{mtx_};
    return requests_;
  }

  /// When each request came.
  std::vector<std::chrono::steady_clock::time_point> request_times() {
    std::lock_guard<std::mutex> guard{mtx_};
    return times_;
  }

  /// Waits until `n` requests have been answered (each with the records set before it);
  /// false after `timeout`.
  bool wait_for_requests(int n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock{mtx_};
    return asked_.wait_for(lock, timeout, [&] { return requests_ >= n; });
  }

private:
  io_threads io_;
  unix_http_server srv_;
  std::mutex mtx_;
  std::condition_variable asked_;
  std::vector<volume_record> records_;
  int requests_ = 0;
  std::vector<std::chrono::steady_clock::time_point> times_;
};

inline volume_record staged(const std::string& name) {
  volume_record rec;
  rec.name = name;
  rec.owner = record_owner::csi;
  rec.backend = "block";
  rec.staging_path = "/var/lib/kubelet/plugins/kubernetes.io/csi/berth.csi.dev/x/globalmount";
  return rec;
}

inline kube::attachment va(const std::string& name, const std::string& node,
                           const std::string& driver, const std::string& volume) {
  return {name, node, driver, volume};
}

class prestop_fixture : public ::testing::Test {
protected:
  using clock = std::chrono::steady_clock;

  temp_dir dir;
  std::shared_ptr<fake_kube> kube = std::make_shared<fake_kube>();
  std::unique_ptr<admin_stand_in> admin;
  std::shared_ptr<capture_sink> sink = std::make_shared<capture_sink>();
  drain::prestop_config cfg;

  void SetUp() override {
    auto logger = std::make_shared<spdlog::logger>("prestop-test", sink);
    logger->set_pattern("%l %v");
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
    cfg.node = "n1";
    cfg.admin_socket = dir.path + "/admin.sock";
    cfg.deadline = std::chrono::seconds{10};
    admin = std::make_unique<admin_stand_in>(cfg.admin_socket);
  }

  void TearDown() override {
    kube->shutdown();
    // The hook's watcher may still be in a call when the hook returns: it must be gone
    // before the logger is.
    EXPECT_TRUE(api_released(std::chrono::seconds{10}))
      << "a worker of the hook still holds its Kubernetes API client";
    if (HasFailure()) {
      std::cerr << "the hook's log:\n" << sink->text();
    }
  }

  void cordon() {
    kube::node_info n;
    n.found = true;
    n.unschedulable = true;
    kube->set_node(n);
  }

  drain::prestop_outcome run() { return drain::wait_for_drain(cfg, tracked(kube)); }

  /// `api` as a pointer whose last copy, wherever it is dropped (by the hook's watcher
  /// thread, when it ends), lets TearDown know.
  std::shared_ptr<kube::kube_api> tracked(std::shared_ptr<kube::kube_api> api) {
    if (!api) {
      return api;
    }
    {
      std::lock_guard<std::mutex> guard{users_->mtx};
      ++users_->n;
    }
    kube::kube_api* raw = api.get();
    return {raw, [api = std::move(api), users = users_](kube::kube_api*) mutable {
              api.reset();
              std::lock_guard<std::mutex> guard{users->mtx};
              --users->n;
              users->cv.notify_all();
            }};
  }

  /// Waits until every pointer from tracked() has been dropped; false after `timeout`.
  bool api_released(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock{users_->mtx};
    return users_->cv.wait_for(lock, timeout, [&] { return users_->n == 0; });
  }

  /// How many pointers from tracked() are still held.
  struct api_users {
    std::mutex mtx;
    std::condition_variable cv;
    int n = 0;
  };
  std::shared_ptr<api_users> users_ = std::make_shared<api_users>();

  /// Waits until berthd has been asked `more` more times; false after 10 s. The hook's
  /// poller asks only while the hook waits: at once after a change of the attachments (one
  /// request may be in flight too), otherwise once a period. So one more than those, and the
  /// hook was still waiting a whole period after this call.
  bool asked_again(int more) {
    return admin->wait_for_requests(admin->requests() + more, std::chrono::seconds{10});
  }

  /// Whether `first` and then `second` occur in the log, in that order.
  bool logged_in_order(const std::string& first, const std::string& second) {
    auto text = sink->text();
    auto a = text.find(first);
    auto b = text.find(second);
    return a != std::string::npos && b != std::string::npos && a < b;
  }

  /// How often `needle` occurs in the log.
  size_t logged(const std::string& needle) {
    auto text = sink->text();
    size_t n = 0;
    for (auto pos = text.find(needle); pos != std::string::npos;
         pos = text.find(needle, pos + 1)) {
      ++n;
    }
    return n;
  }
};

inline double secs(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

} // namespace berth::test
