#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace berth {

/// What a helper program (mount(8), nsenter, mkfs) did.
struct helper_result {
  int exit_code = -1;      ///< exit status, or -1 when killed by a signal
  bool timed_out = false;  ///< killed with SIGKILL after the timeout
  std::string out;         ///< captured stdout
  std::string err;         ///< captured stderr
};

/// Runs `argv` (argv[0] looked up in PATH) in its own process group, stdin from
/// /dev/null, stdout and stderr captured. After `timeout` the whole group gets
/// SIGKILL. Fails only when the program cannot be started, or (ec::invalid_argument,
/// nothing run) when an argument after the last `--` begins with '-': callers put
/// `--` before positional arguments (devices, paths), and those are never options.
caf::expected<helper_result> run_helper(const std::vector<std::string>& argv,
                                        std::chrono::milliseconds timeout);

/// The directories of $PATH, in order; an empty entry stays empty. None when PATH is unset.
std::vector<std::string> path_directories();

/// The first DIR/name of `dirs` (empty entries skipped) that is executable; "" when none.
std::string find_executable(const std::string& name, const std::vector<std::string>& dirs);

/// `program` as execvp would find it: itself when it holds a '/', else the first executable
/// of that name on PATH (an empty entry meaning the current directory; execvp's default list
/// when PATH is unset). "" when there is none.
std::string find_program(const std::string& program);

/// Shell-like rendering of `argv` for messages and logs.
std::string render_command(const std::vector<std::string>& argv);

/// Runs `argv` and turns every failure into an error naming `what`: ec::timeout
/// when killed, ec::backend_failure with the helper's stderr on a non-zero exit.
/// @returns the helper's stdout.
caf::expected<std::string> run_helper_checked(const std::vector<std::string>& argv,
                                              std::chrono::milliseconds timeout,
                                              const std::string& what);

} // namespace berth
