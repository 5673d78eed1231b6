#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include <caf/expected.hpp>

namespace berth {

/// berthd's command line. An empty socket path turns that socket off.
struct daemon_options {
  std::string state_dir = "/var/lib/berth";
  std::string docker_socket = "/run/docker/plugins/berth.sock";
  std::string admin_socket = "/run/berth/admin.sock";
  std::string log_format = "text"; ///< text | json
  std::string log_level = "info";
  std::string import_ecs_state;    ///< amazon-ecs-volume-plugin state file to import
  std::chrono::milliseconds backend_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds stop_timeout{std::chrono::seconds(30)};
  size_t executor_threads = 16;
  /// Test only: this volume's backend calls stall for test_stall (benchmarks).
  std::string test_stall_volume;
  std::chrono::milliseconds test_stall{0};
  bool help = false;
  bool version = false;
};

/// Parses `--flag VALUE` and `--flag=VALUE`; errors name the bad flag or value.
caf::expected<daemon_options> parse_daemon_options(int argc, const char* const* argv);

/// The --help text.
std::string daemon_usage();

} // namespace berth
