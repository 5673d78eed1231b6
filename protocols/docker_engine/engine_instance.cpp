#include "protocols/docker_engine/engine_instance.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/errors.hpp"

namespace berth::docker_engine {

std::string engine_instance::describe() const {
  if (!known()) {
    return "an unknown dockerd instance";
  }
  auto started = " (started " + std::to_string(start_ticks) + " ticks after boot)";
  if (is_dockerd()) {
    return "dockerd pid " + std::to_string(pid) + started;
  }
  return "pid " + std::to_string(pid) + " " + (command.empty() ? "?" : command) +
         ", not dockerd: the socket is socket-activated" + started;
}

std::string parse_stat_command(const std::string& stat_line) {
  auto open = stat_line.find('(');
  auto close = stat_line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return {};
  }
  return stat_line.substr(open + 1, close - open - 1);
}

caf::expected<uint64_t> parse_stat_start_ticks(const std::string& stat_line) {
  auto close = stat_line.rfind(')');
  if (close == std::string::npos) {
    return make_error(ec::invalid_argument, "/proc/PID/stat: no ')' after the command name");
  }
  std::istringstream in{stat_line.substr(close + 1)};
  std::string field;
  // After ')' come field 3 (state) ... field 22 (starttime): the 20th word.
  for (int n = 3; n <= 22; ++n) {
    if (!(in >> field)) {
      return make_error(ec::invalid_argument,
                        "/proc/PID/stat: only " + std::to_string(n - 1) + " fields, starttime is field 22");
    }
  }
  errno = 0;
  char* end = nullptr;
  auto ticks = std::strtoull(field.c_str(), &end, 10);
  if (errno != 0 || end == field.c_str() || *end != '\0') {
    return make_error(ec::invalid_argument, "/proc/PID/stat: starttime '" + field + "' is not a number");
  }
  return static_cast<uint64_t>(ticks);
}

engine_instance peer_instance(int socket_fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) {
    return {};
  }
  std::ifstream in{"/proc/" + std::to_string(cred.pid) + "/stat"};
  std::string line;
  if (!in || !std::getline(in, line)) {
    return {};
  }
  auto ticks = parse_stat_start_ticks(line);
  if (!ticks) {
    return {};
  }
  return engine_instance{static_cast<int>(cred.pid), *ticks, parse_stat_command(line)};
}

} // namespace berth::docker_engine
