#include "protocols/docker/sync/dockerd_alive.hpp"

#include <fstream>
#include <sstream>

#include "protocols/docker/engine/engine_instance.hpp"

namespace berth::docker_sync {

bool dockerd_alive(const dockerd_key& key, const std::string& proc_root) {
  auto at = key.find('@');
  if (at == std::string::npos || at == 0 || at + 1 == key.size()) {
    return false;
  }
  auto pid = key.substr(0, at);
  auto ticks = key.substr(at + 1);
  if (pid.find_first_not_of("0123456789") != std::string::npos
      || ticks.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9
      || ticks.size() > 19) {
    return false;
  }
  std::ifstream in{proc_root + "/" + pid + "/stat"};
  if (!in) {
    return false;
  }
  std::ostringstream line;
  line << in.rdbuf();
  auto start = docker_engine::parse_stat_start_ticks(line.str());
  return start && std::to_string(*start) == ticks;
}

} // namespace berth::docker_sync
