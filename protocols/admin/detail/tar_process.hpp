#pragma once

// GNU tar as a child of berthd, with the archive on a pipe: berthctl export reads what
// `tar --create` writes, berthctl import writes what `tar --extract` reads. Its errors go
// to a memory file read once it has ended. Like every helper berthd runs, it dies with
// berthd (setpriv --pdeathsig KILL).

#include <atomic>
#include <string>

#include <caf/expected.hpp>

namespace berth::admin::detail {

/// What a tar that ended said.
struct tar_result {
  int exit_code = -1;  ///< its exit status, -1 when a signal ended it
  std::string errors;  ///< its stderr, at most 4 KiB
};

class tar_process {
public:
  /// `tar --create` of the directory `dir` ("."), the archive on data_fd() to read.
  static caf::expected<tar_process> create(const std::string& dir);
  /// `tar --extract` into the directory `dir`, the archive from data_fd() to write.
  static caf::expected<tar_process> extract(const std::string& dir);

  tar_process(tar_process&& other) noexcept;
  tar_process& operator=(tar_process&&) = delete;
  tar_process(const tar_process&) = delete;
  /// Kills and reaps a tar not waited for.
  ~tar_process();

  /// berthd's end of the archive's pipe (blocking).
  int data_fd() const {
    return data_fd_;
  }
  /// Closes berthd's end: an extracting tar reads the archive's end.
  void close_data();
  /// Ends the tar at once (SIGKILL to its process group); safe from any thread.
  void kill();
  /// Closes berthd's end and waits for the tar to end.
  tar_result wait();

private:
  tar_process(int pid, int data_fd, int errors_fd);
  static caf::expected<tar_process> spawn(const std::string& mode, const std::string& dir);

  std::atomic<int> pid_{-1}; ///< -1 once reaped; kill() may read it from another thread
  int data_fd_ = -1;
  int errors_fd_ = -1;
};

} // namespace berth::admin::detail
