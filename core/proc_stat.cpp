#include "core/proc_stat.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/errors.hpp"

namespace berth {

std::string parse_stat_command(const std::string& stat_line) {
  auto open = stat_line.find('(');
  auto close = stat_line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return {};
  }
  return stat_line.substr(open + 1, close - open - 1);
}

caf::expected<std::vector<std::string>> parse_stat_fields(const std::string& stat_line) {
  auto close = stat_line.rfind(')');
  if (close == std::string::npos) {
    return make_error(ec::invalid_argument, "/proc/PID/stat: no ')' after the command name");
  }
  std::istringstream in{stat_line.substr(close + 1)};
  std::vector<std::string> fields;
  for (std::string word; in >> word;) {
    fields.push_back(std::move(word));
  }
  return fields;
}

caf::expected<uint64_t> parse_stat_start_ticks(const std::string& stat_line) {
  auto fields = parse_stat_fields(stat_line);
  if (!fields) {
    return fields.error();
  }
  constexpr size_t starttime = 22 - 3;
  if (fields->size() <= starttime) {
    return make_error(ec::invalid_argument, "/proc/PID/stat: only "
                                              + std::to_string(fields->size() + 2)
                                              + " fields, starttime is field 22");
  }
  const auto& field = (*fields)[starttime];
  errno = 0;
  char* end = nullptr;
  auto ticks = std::strtoull(field.c_str(), &end, 10);
  if (errno != 0 || end == field.c_str() || *end != '\0') {
    return make_error(ec::invalid_argument, "/proc/PID/stat: starttime '" + field + "' is not a number");
  }
  return static_cast<uint64_t>(ticks);
}

process_stat read_process_stat(int pid) {
  if (pid <= 0) {
    return {};
  }
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string line;
  if (!in || !std::getline(in, line)) {
    return {};
  }
  auto ticks = parse_stat_start_ticks(line);
  if (!ticks) {
    return {};
  }
  return process_stat{pid, *ticks, parse_stat_command(line)};
}

process_stat socket_peer(int socket_fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) {
    return {};
  }
  return read_process_stat(cred.pid);
}

} // namespace berth
