// berthctl: inspects a running berthd through its admin socket.
// The logic lives in protocols/admin/berthctl_cli.cpp (tested there).

#include <iostream>
#include <string>
#include <vector>

#include "protocols/admin/berthctl_cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return berth::cli::run(args, std::cout, std::cerr);
}
