// Fuzzes a Docker Create body from the wire to the argv of the mount helper: the
// plugin codec (protocols/docker/docker_codec.hpp), then local mount planning
// (backends/local_options.hpp) with and without mount.efs. Oracles: a decoded name is
// valid; a plan exists only for options that validate; a block device is a clean path
// under /dev/, a bind source and a network namespace clean absolute paths; in the
// helper's argv no element an option fills (the -t and -o values) begins with '-',
// the device and mountpoint follow berth's "--", and no element holds a NUL byte
// (execve would cut it short).

#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/local_options.hpp"
#include "core/names.hpp"
#include "protocols/docker/docker_codec.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace berth;

namespace {

void check_argv(const mount_plan& plan, const std::string& mnt) {
  auto argv = helper_command(plan, mnt);
  std::string all;
  for (const auto& a : argv) {
    all += "[" + a + "]";
    fuzz::check(a.find('\0') == std::string::npos, "no argv element holds a NUL", all);
  }
  size_t i = 0;
  if (!plan.netns.empty()) {
    fuzz::check(argv.size() > 3 && argv[0] == "nsenter" && argv[1] == "--net=" + plan.netns
                  && argv[2] == "--",
                "nsenter's options end at berth's --", all);
    i = 3;
  }
  fuzz::check(argv.size() >= i + 6 && argv[i] == "mount" && argv[i + 1] == "-t",
              "mount -t comes first", all);
  fuzz::check(!argv[i + 2].empty() && argv[i + 2][0] != '-', "the -t value is no option", all);
  i += 3;
  if (argv[i] == "-o") {
    fuzz::check(argv.size() > i + 1 && !argv[i + 1].empty() && argv[i + 1][0] != '-',
                "the -o value is no option", all);
    i += 2;
  }
  fuzz::check(argv.size() == i + 3 && argv[i] == "--" && argv[i + 1] == plan.device
                && argv[i + 2] == mnt,
              "the device and mountpoint follow berth's --", all);
}

void check_plan(const docker::create_request& req, const efs_environment& env) {
  auto plan = plan_local_mount(req.name, req.options, env);
  if (!plan) {
    return;
  }
  fuzz::check(!validate_local_options(req.name, req.options),
              "a planned volume's options validate", req.name);
  if (plan->kind == local_kind::block) {
    fuzz::check(is_clean_absolute_path(plan->device) && plan->device.rfind("/dev/", 0) == 0,
                "a block device is a clean path under /dev/", plan->device);
  }
  if (plan->kind == local_kind::bind) {
    fuzz::check(is_clean_absolute_path(plan->device), "a bind source is a clean absolute path",
                plan->device);
  }
  if (!plan->netns.empty()) {
    fuzz::check(is_clean_absolute_path(plan->netns), "a netns is a clean absolute path",
                plan->netns);
  }
  const auto& root = plan->root;
  if (root.uid || root.gid || root.mode) {
    fuzz::check(plan->kind == local_kind::directory, "only a plain directory takes uid, gid, mode", req.name);
  }
  fuzz::check(!root.mode || *root.mode <= 07777, "a root mode is permission bits only", req.name);
  fuzz::check((!root.uid || *root.uid != UINT32_MAX) && (!root.gid || *root.gid != UINT32_MAX),
              "no root id is -1, which chown reads as leave it", req.name);
  fuzz::check(plan->data.find('\0') == std::string::npos, "mount data holds no NUL", plan->data);
  if (plan->use_helper) {
    check_argv(*plan, "/var/lib/berth/volumes/" + req.name + "/mnt");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto req = docker::decode_create(body);
  if (!req) {
    return 0;
  }
  fuzz::check(is_valid_volume_name(req->name), "a decoded name is valid", req->name);
  check_plan(*req, efs_environment{});
  check_plan(*req, efs_environment{true, "eu-west-1"});
  return 0;
}
