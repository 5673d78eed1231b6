// berth-bench: load generator for berthd's Docker volume plugin and CSI sockets.
// Prints readable lines, then one JSON object as the last line.

#include <cstdio>
#include <string>
#include <vector>

#include "apps/bench/bench_args.hpp"

int main(int argc, char** argv) {
  berth::bench::bench_args args;
  if (auto err = berth::bench::parse_bench_args({argv + 1, argv + argc}, args)) {
    std::fprintf(stderr, "berth-bench: %s (see berth-bench --help)\n", err->c_str());
    return 2;
  }
  if (args.help) {
    std::printf("%s\n", berth::bench::bench_usage().c_str());
    return 0;
  }
  if (args.version) {
    std::printf("berth-bench %s\n", BERTH_VERSION);
    return 0;
  }
  if (args.mode == "csi") {
    return berth::bench::run_csi(args.csi);
  }
  if (args.mode == "csi-list") {
    return berth::bench::run_csi_list(args.list);
  }
  if (args.mode == "csi-burst") {
    return berth::bench::run_csi_burst(args.burst);
  }
  if (args.mode == "io") {
    return berth::bench::run_io(args.io);
  }
  if (args.mode == "docker") {
    return berth::bench::run_docker(args.common);
  }
  return berth::bench::run_restart(args.common);
}
