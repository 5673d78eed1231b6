#pragma once

// A program the cluster test runs beside the berthd nodes (the API server stand-in, the
// controller): started with its output in a log file, SIGTERMed (then SIGKILLed) when
// stopped or destroyed.

#include <chrono>
#include <string>
#include <vector>

#include <sys/types.h>

namespace berth::cluster_test {

class child_process {
public:
  child_process() = default;
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  /// Starts argv[0] with `argv`, its stdout and stderr appended to `log`. "" or why not.
  std::string start(const std::vector<std::string>& argv, const std::string& log);

  /// SIGTERM, up to `limit`, then SIGKILL; reaps it.
  void stop(std::chrono::seconds limit = std::chrono::seconds(10));

  bool running() const {
    return pid_ > 0;
  }

  /// Waits up to `limit` for it to end by itself, and reaps it: true when it ended.
  bool ended_within(std::chrono::milliseconds limit);

private:
  pid_t pid_ = -1;
};

/// Waits up to `limit` until `path` exists.
bool wait_for_file(const std::string& path, std::chrono::seconds limit);

/// The whole file at `path` ("" when it cannot be read).
std::string text_of(const std::string& path);

/// The last `lines` lines of the file at `path`.
std::string tail_of(const std::string& path, size_t lines = 30);

} // namespace berth::cluster_test
