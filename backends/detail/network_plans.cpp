#include "backends/detail/network_plans.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <arpa/inet.h>
#include <unistd.h>

#include "backends/helper_process.hpp"
#include "core/errors.hpp"

namespace berth {

namespace detail {

namespace {

const name_set efs_only = {"tls",         "iam",          "accesspoint", "netns",
                           "awsprofile",  "awscredsuri",  "mounttargetip", "region"};

caf::error invalid_option(const std::string& message) {
  return make_error(ec::invalid_argument, message);
}

/// EFS without mount.efs: plain NFSv4.1 with EFS's recommended options.
caf::error plan_efs_as_nfs4(const std::string& volume, const std::string& id,
                            const std::string& path, const std::vector<element>& elements,
                            const efs_environment& env, mount_plan& plan) {
  std::string host;
  if (auto ip = find_element(elements, "mounttargetip"); ip != nullptr && !ip->value.empty()) {
    host = ip->value;
  } else {
    auto region = find_element(elements, "region");
    std::string r = region != nullptr ? region->value : env.default_region;
    if (r.empty()) {
      return make_error(ec::invalid_argument,
                        "volume " + volume + ": EFS device " + id
                          + " needs region= (or AWS_REGION) or mounttargetip= in option o"
                            " because mount.efs is not installed");
    }
    host = id + ".efs." + r + ".amazonaws.com";
  }
  std::vector<element> merged = split_o(
    "nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport");
  std::vector<std::string> ignored;
  for (const auto& e : elements) {
    if (efs_only.count(e.key) > 0) {
      if (e.key == "tls" || e.key == "iam" || e.key == "accesspoint" || e.key == "awsprofile"
          || e.key == "awscredsuri") {
        ignored.push_back(e.key);
      }
      continue;
    }
    auto same = [&](const element& d) {
      bool version = (e.key == "vers" || e.key == "nfsvers")
                     && (d.key == "vers" || d.key == "nfsvers");
      bool hardness = (e.key == "hard" || e.key == "soft") && (d.key == "hard" || d.key == "soft");
      return version || hardness || d.key == e.key;
    };
    merged.erase(std::remove_if(merged.begin(), merged.end(), same), merged.end());
    merged.push_back(e);
  }
  if (!ignored.empty()) {
    std::string list;
    for (const auto& k : ignored) {
      list += list.empty() ? "" : ", ";
      list += k;
    }
    plan.warnings.push_back("volume " + volume + ": " + list
                            + " cannot be honoured without mount.efs (amazon-efs-utils); "
                              "mounting " + id + " as plain NFSv4.1 without them");
  }
  plan.fstype = "nfs4";
  plan.device = host + ":" + path;
  plan.data = join_elements(merged);
  return {};
}

} // namespace

const name_set& efs_only_elements() {
  return efs_only;
}

bool parse_efs_device(const std::string& device, std::string& id, std::string& path) {
  size_t colon = device.find(':');
  id = device.substr(0, colon);
  path = colon == std::string::npos ? "/" : device.substr(colon + 1);
  if (id.size() <= 3 || id.compare(0, 3, "fs-") != 0) {
    return false;
  }
  bool alnum = std::all_of(id.begin() + 3, id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
  return alnum && !path.empty() && path[0] == '/';
}

caf::error plan_nfs(const std::string& volume, const std::string& type, const std::string& device,
                    const std::vector<element>& elements, mount_plan& plan) {
  auto invalid = invalid_option;
  // host:/path; the host a name or an address (IPv6 in brackets), or empty
  // with o=addr=ADDRESS. Nothing here may begin with '-': mount(8) and
  // mount.nfs would read it as an option (-T names an fstab file).
  auto bad_device = [&](const std::string& why) {
    return invalid("device \"" + device + "\" of volume " + volume + " " + why
                   + " (expected host:/path, e.g. server.example:/export, 10.0.0.2:/export, "
                     "[fd00::2]:/export, or :/path with o=addr=ADDRESS)");
  };
  size_t colon = device.find(':');
  if (device[0] == '[') {
    size_t close = device.find(']');
    colon = close == std::string::npos ? std::string::npos : close + 1;
  }
  if (colon >= device.size() || device[colon] != ':') {
    return bad_device("has no \":/path\" after the host");
  }
  std::string host = device.substr(0, colon);
  std::string path = device.substr(colon + 1);
  if (host.empty()) {
    auto addr = find_element(elements, "addr");
    if (addr == nullptr || !is_ip_address(addr->value)) {
      return bad_device("has no host, and o has no addr= with an IP address");
    }
  } else if (!is_valid_nfs_host(host)) {
    return bad_device("names no valid host: \"" + host + "\"");
  }
  if (!is_clean_absolute_path(path)) {
    return bad_device("has no clean absolute export path: \"" + path + "\"");
  }
  if (auto addr = find_element(elements, "addr"); addr != nullptr && !is_ip_address(addr->value)) {
    return invalid("addr=\"" + addr->value + "\" of volume " + volume
                   + " must be an IP address");
  }
  plan.fstype = type;
  plan.device = device;
  plan.data = join_elements(elements);
  plan.use_helper = true;
  return {};
}

caf::error plan_efs(const std::string& volume, const std::string& device, std::string efs_id,
                    std::string efs_path, const std::vector<element>& elements,
                    const efs_environment& env, mount_plan& plan) {
  auto invalid = invalid_option;
  if (efs_id.empty() && !parse_efs_device(device, efs_id, efs_path)) {
    return invalid("device \"" + device + "\" of volume " + volume
                   + " must look like fs-XXXXXXXX or fs-XXXXXXXX:/path");
  }
  if (auto ip = find_element(elements, "mounttargetip");
      ip != nullptr && !is_ip_address(ip->value)) {
    return invalid("mounttargetip=\"" + ip->value + "\" of volume " + volume
                   + " must be an IP address");
  }
  if (auto region = find_element(elements, "region");
      region != nullptr && !is_valid_nfs_host(region->value)) {
    return invalid("region=\"" + region->value + "\" of volume " + volume
                   + " is not a region name (e.g. eu-west-1)");
  }
  if (!is_clean_absolute_path(efs_path)) {
    return invalid("device \"" + device + "\" of volume " + volume
                   + " must have a clean absolute path after the file system ID");
  }
  plan.use_helper = true;
  if (env.helper_installed) {
    plan.fstype = "efs";
    plan.device = efs_id + ":" + efs_path;
    plan.data = join_elements(elements);
  } else {
    return plan_efs_as_nfs4(volume, efs_id, efs_path, elements, env, plan);
  }
  return {};
}

} // namespace detail

bool is_valid_nfs_host(const std::string& host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    unsigned char buf[sizeof(struct in6_addr)];
    return ::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), buf) == 1;
  }
  unsigned char v4[sizeof(struct in_addr)];
  if (::inet_pton(AF_INET, host.c_str(), v4) == 1) {
    return true;
  }
  if (host.empty() || host.size() > 253) {
    return false;
  }
  // RFC 1123 labels: 1-63 letters, digits and '-', neither first nor last a '-'.
  size_t pos = 0;
  while (true) {
    size_t dot = host.find('.', pos);
    std::string label = host.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-') {
        return false;
      }
    }
    if (dot == std::string::npos) {
      return true;
    }
    pos = dot + 1;
  }
}

efs_environment probe_efs_environment() {
  efs_environment env;
  // The sbin directories first, then PATH.
  std::vector<std::string> dirs = {"/sbin", "/usr/sbin", "/usr/local/sbin"};
  auto path = path_directories();
  dirs.insert(dirs.end(), path.begin(), path.end());
  env.helper_installed = !find_executable("mount.efs", dirs).empty();
  for (const char* var : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
    if (const char* r = std::getenv(var); r != nullptr && *r != '\0') {
      env.default_region = r;
      break;
    }
  }
  return env;
}

} // namespace berth
