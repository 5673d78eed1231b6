#pragma once

// berthctl run in-process against an admin socket, as an operator's shell would run it.

#include <sstream>
#include <string>
#include <vector>

#include "apps/berthctl/berthctl_cli.hpp"

namespace berth::test {

/// Runs berthctl with `args` against `socket`: its exit code, with what it wrote to its
/// standard output and error in `out` and `err`.
inline int run_berthctl(const std::string& socket, std::vector<std::string> args, std::string& out,
                        std::string& err) {
  args.insert(args.begin(), {"--socket", socket});
  std::ostringstream o;
  std::ostringstream e;
  int rc = cli::run(args, o, e);
  out = o.str();
  err = e.str();
  return rc;
}

} // namespace berth::test
