// berthctl: inspects a running berthd through its admin socket.
// The logic lives in apps/berthctl/berthctl_cli.cpp (tested there).

#include <iostream>
#include <string>
#include <vector>

#include "apps/berthctl/berthctl_cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return berth::cli::run(args, std::cout, std::cerr);
}
