#pragma once

// The real berthd, as a child process of the test, on a fresh temp dir:
//
//   /tmp/berth-csi-<test pid>-XXXXXX/        root()
//     kubelet/                               --kubelet-dir: staging and target paths go here
//     state/                                 --state-dir (the sockets live in it too)
//       csi.sock docker.sock admin.sock berthd.log
//
// start() waits until the CSI socket accepts connections; stop() is SIGTERM,
// kill9() a crash; start() again restarts on the same state. The destructor kills
// berthd and unmounts, detaches and deletes everything below root(), also after a
// failed test. A crashed test run's leftovers are cleaned by the next run.

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace berth::csi_test {

class berthd_process {
public:
  /// Makes the temp dir; binary() is the berthd to run.
  berthd_process();
  ~berthd_process();

  berthd_process(const berthd_process&) = delete;
  berthd_process& operator=(const berthd_process&) = delete;

  /// The berthd under test: $BERTHD, else the path CMake compiled in.
  static std::string binary();

  /// Why the suite cannot run here ("" when it can): not root, no berthd, no loop
  /// devices, no mkfs.xfs.
  static std::string missing_prerequisite();

  /// Removes the temp dirs of earlier runs whose process is gone.
  static void clean_stale_runs();

  /// Starts berthd and waits (30 s) until the CSI socket accepts a connection.
  /// Returns "" on success, else why it failed (with the log's tail).
  std::string start();

  /// SIGTERM, then waits `limit`. Returns the exit status; 128+N when signal N
  /// ended it; -1 when it did not stop in time (it is then SIGKILLed).
  int stop(std::chrono::seconds limit = std::chrono::seconds(30));

  /// SIGKILL and reap: a crash.
  void kill9();

  /// Reaps berthd if it has ended by itself (a crash point, say): true then, and
  /// running() is false from then on. False while it runs.
  bool exited();

  bool running() const {
    return pid_ > 0;
  }
  pid_t pid() const {
    return pid_;
  }

  const std::string& root() const {
    return root_;
  }
  std::string state_dir() const {
    return root_ + "/state";
  }
  /// berthd's --kubelet-dir: every staging and target path lies under it.
  std::string kubelet_dir() const {
    return root_ + "/kubelet";
  }
  std::string csi_socket() const {
    return state_dir() + "/csi.sock";
  }
  /// "unix:///tmp/.../state/csi.sock"
  std::string endpoint() const {
    return "unix://" + csi_socket();
  }
  std::string log_path() const {
    return root_ + "/berthd.log";
  }
  /// The last `lines` lines of berthd's output (all starts).
  std::string log_tail(size_t lines = 40) const;

  /// Waits up to `limit` until berthd's output holds `needle`: true once it does. Woken
  /// by each write to the log (inotify), so it reads no clock but the limit.
  bool wait_for_log(const std::string& needle, std::chrono::seconds limit) const;

  /// Runs the berthctl beside binary() against this berthd's admin socket with `args`
  /// (split by the shell): its exit status and what it printed, stderr included.
  std::pair<int, std::string> berthctl(const std::string& args) const;

  /// Arguments appended to every start.
  std::vector<std::string> extra_args;

  /// --node-id of every start.
  std::string node_id = "test-node";

private:
  std::string root_;
  pid_t pid_ = -1;
};

} // namespace berth::csi_test
