#include "backends/local_options.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include <arpa/inet.h>
#include <sys/mount.h>
#include <unistd.h>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace berth {

namespace {

// -- allow-lists --------------------------------------------------------------

using name_set = std::set<std::string, std::less<>>;

const name_set top_level = {"type", "device", "o", "size"};

const name_set tmpfs_elements = {"size", "mode",  "uid",    "gid",   "nr_inodes", "nr_blocks",
                                 "huge", "noexec", "nosuid", "nodev", "ro",        "rw"};

const name_set bind_elements = {"bind",  "rbind",  "ro",      "rw",       "nosuid",
                                "nodev", "noexec", "noatime", "relatime", "nodiratime"};

const name_set block_elements = {"ro",     "rw",    "noatime", "relatime",  "nodiratime",
                                 "discard", "nosuid", "nodev",  "noexec",    "sync",
                                 "data",   "nobarrier", "prjquota", "uquota", "gquota"};

const name_set nfs_elements = {"addr",   "vers",    "nfsvers",    "port",    "rsize",
                               "wsize",  "timeo",   "retrans",    "hard",    "soft",
                               "nolock", "proto",   "noresvport", "ro",      "rw",
                               "nosuid", "nodev",   "noexec",     "sec",     "actimeo",
                               "nconnect", "lookupcache", "namlen", "fsc",   "netns"};

const name_set efs_only = {"tls",         "iam",          "accesspoint", "netns",
                           "awsprofile",  "awscredsuri",  "mounttargetip", "region"};

/// Options that mount(2) takes as MS_* flags rather than in the data string.
struct flag_option {
  const char* name;
  unsigned long set;
  unsigned long clear;
};

const flag_option flag_options[] = {
  {"ro", MS_RDONLY, 0},         {"rw", 0, MS_RDONLY},
  {"nosuid", MS_NOSUID, 0},     {"nodev", MS_NODEV, 0},
  {"noexec", MS_NOEXEC, 0},     {"noatime", MS_NOATIME, 0},
  {"relatime", MS_RELATIME, 0}, {"nodiratime", MS_NODIRATIME, 0},
  {"sync", MS_SYNCHRONOUS, 0},
};

std::string join(const name_set& names) {
  std::string out;
  for (const auto& n : names) {
    out += out.empty() ? "" : ", ";
    out += n;
  }
  return out;
}

// -- elements of `o` ----------------------------------------------------------

struct element {
  std::string key;
  std::string text; ///< "key" or "key=value"
  std::string value;
};

std::vector<element> split_o(const std::string& o) {
  std::vector<element> out;
  size_t pos = 0;
  while (pos <= o.size()) {
    size_t comma = o.find(',', pos);
    std::string text = o.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t eq = text.find('=');
    element e{text.substr(0, eq), text, eq == std::string::npos ? "" : text.substr(eq + 1)};
    out.push_back(std::move(e));
    if (comma == std::string::npos) {
      break;
    }
    pos = comma + 1;
  }
  return out;
}

std::string join_elements(const std::vector<element>& elements) {
  std::string out;
  for (const auto& e : elements) {
    out += out.empty() ? "" : ",";
    out += e.text;
  }
  return out;
}

bool is_size_value(const std::string& s) {
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') {
    ++digits;
  }
  if (digits == 0) {
    return false;
  }
  std::string rest = s.substr(digits);
  return rest.empty() || rest == "k" || rest == "K" || rest == "m" || rest == "M" || rest == "g"
         || rest == "G" || rest == "%";
}

/// "fs-0123abcd" or "fs-0123abcd:/path" -> id and path ("/" by default).
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

const element* find_element(const std::vector<element>& elements, const std::string& key) {
  for (const auto& e : elements) {
    if (e.key == key) {
      return &e;
    }
  }
  return nullptr;
}

/// Splits `elements` into MS_* flags and the data string for mount(2).
void to_flags_and_data(const std::vector<element>& elements, mount_plan& plan) {
  std::vector<element> rest;
  for (const auto& e : elements) {
    auto it = std::find_if(std::begin(flag_options), std::end(flag_options),
                           [&](const flag_option& f) { return e.text == f.name; });
    if (it != std::end(flag_options)) {
      plan.flags = (plan.flags | it->set) & ~it->clear;
    } else if (e.text == "bind") {
      plan.flags |= MS_BIND;
    } else if (e.text == "rbind") {
      plan.flags |= MS_BIND | MS_REC;
    } else {
      rest.push_back(e);
    }
  }
  plan.data = join_elements(rest);
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

/// A tmpfs source is only a label in mountinfo: letters, digits, `_ . -`, not
/// beginning with '-'.
bool is_valid_label(const std::string& s) {
  if (s.empty() || s.size() > 64 || s[0] == '-') {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
  });
}

bool is_ip_address(const std::string& s) {
  unsigned char buf[sizeof(struct in6_addr)];
  return ::inet_pton(AF_INET, s.c_str(), buf) == 1 || ::inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

} // namespace

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

bool overlaps(const std::string& path, const std::string& dir) {
  auto under = [](const std::string& a, const std::string& b) {
    // a == b, or a lies below b ("/" is above everything)
    return a == b || (a.size() > b.size() && a.compare(0, b.size(), b) == 0
                      && (b.back() == '/' || a[b.size()] == '/'));
  };
  return under(path, dir) || under(dir, path);
}

bool is_clean_absolute_path(const std::string& path) {
  if (path.empty() || path[0] != '/' || has_control_char(path)) {
    return false;
  }
  size_t pos = 1;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    std::string part = path.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    if (part == "." || part == "..") {
      return false;
    }
    if (slash == std::string::npos) {
      break;
    }
    pos = slash + 1;
  }
  return true;
}

efs_environment probe_efs_environment() {
  efs_environment env;
  std::vector<std::string> dirs = {"/sbin", "/usr/sbin", "/usr/local/sbin"};
  if (const char* p = std::getenv("PATH"); p != nullptr) {
    std::string path = p;
    size_t pos = 0;
    while (pos <= path.size()) {
      size_t colon = path.find(':', pos);
      dirs.push_back(path.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos));
      if (colon == std::string::npos) {
        break;
      }
      pos = colon + 1;
    }
  }
  for (const auto& d : dirs) {
    if (!d.empty() && ::access((d + "/mount.efs").c_str(), X_OK) == 0) {
      env.helper_installed = true;
      break;
    }
  }
  for (const char* var : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
    if (const char* r = std::getenv(var); r != nullptr && *r != '\0') {
      env.default_region = r;
      break;
    }
  }
  return env;
}

caf::error validate_local_options(const std::string& volume, const option_map& options) {
  efs_environment any; // validation does not depend on the host
  any.helper_installed = true;
  auto plan = plan_local_mount(volume, options, any);
  return plan ? caf::error{} : plan.error();
}

namespace {

caf::error invalid_option(const std::string& message) {
  return make_error(ec::invalid_argument, message);
}

/// type nfs or nfs4: the device and the elements checked, the plan for mount.nfs.
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

/// type efs (or an nfs device that names an EFS file system): the file system ID and
/// path checked, the plan for amazon-efs-utils, or for plain NFSv4 without it.
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

} // namespace

caf::expected<mount_plan> plan_local_mount(const std::string& volume, const option_map& options,
                                           const efs_environment& env) {
  auto invalid = [&](const std::string& msg) { return make_error(ec::invalid_argument, msg); };
  for (const auto& [key, value] : options) {
    if (top_level.count(key) == 0) {
      return invalid("unknown option \"" + key + "\" for volume " + volume
                     + " (allowed: type, device, o, size)");
    }
    if (value.empty()) {
      return invalid("option \"" + key + "\" of volume " + volume + " is empty");
    }
    if (has_control_char(value)) {
      return invalid("option \"" + key + "\" of volume " + volume + " contains a control character");
    }
  }
  auto get = [&](const char* key) {
    auto it = options.find(key);
    return it == options.end() ? std::string() : it->second;
  };
  const std::string type = get("type");
  const std::string device = get("device");
  const std::string o = get("o");
  const std::string size = get("size");
  mount_plan plan;
  if (type.empty()) {
    for (const char* key : {"device", "o"}) {
      if (options.count(key) > 0) {
        return invalid(std::string("option \"") + key + "\" of volume " + volume
                       + " needs option \"type\"");
      }
    }
    if (!size.empty()) {
      return invalid("option \"size\" of volume " + volume
                     + " is not supported without type=tmpfs (a plain directory has no quota)");
    }
    plan.kind = local_kind::directory;
    plan.flags = MS_BIND;
    return plan;
  }

  // -- the type decides the allow-list and how the device looks --
  const name_set* allowed = nullptr;
  std::string efs_id;
  std::string efs_path;
  if (type == "tmpfs") {
    plan.kind = local_kind::tmpfs;
    allowed = &tmpfs_elements;
  } else if (type == "bind" || type == "none") {
    plan.kind = local_kind::bind;
    allowed = &bind_elements;
  } else if (type == "ext4" || type == "xfs" || type == "btrfs") {
    plan.kind = local_kind::block;
    allowed = &block_elements;
  } else if (type == "nfs" || type == "nfs4") {
    plan.kind = parse_efs_device(device, efs_id, efs_path) ? local_kind::efs : local_kind::nfs;
    allowed = &nfs_elements;
  } else if (type == "efs") {
    plan.kind = local_kind::efs;
    allowed = &nfs_elements;
  } else {
    return invalid("unsupported type \"" + type + "\" for volume " + volume
                   + " (allowed: tmpfs, bind, none, ext4, xfs, btrfs, nfs, nfs4, efs)");
  }
  if (device.empty() && plan.kind != local_kind::tmpfs) {
    return invalid("type \"" + type + "\" of volume " + volume + " needs option \"device\"");
  }
  std::vector<element> elements;
  if (options.count("o") > 0) {
    elements = split_o(o);
  }
  for (const auto& e : elements) {
    if (e.text.empty() || e.key.empty()) {
      return invalid("empty element in option o (\"" + o + "\") for volume " + volume);
    }
    bool ok = allowed->count(e.key) > 0
              || (plan.kind == local_kind::efs && efs_only.count(e.key) > 0);
    if (!ok) {
      std::string list = join(*allowed) + (plan.kind == local_kind::efs ? ", " + join(efs_only) : "");
      return invalid("unknown element \"" + e.key + "\" in option o for volume " + volume
                     + " (type " + type + " allows: " + list + ")");
    }
    if (e.key == "netns" && !is_clean_absolute_path(e.value)) {
      return invalid("netns=\"" + e.value + "\" of volume " + volume
                     + " must be an absolute path without \"..\"");
    }
  }
  if (!size.empty()) {
    if (plan.kind != local_kind::tmpfs) {
      return invalid("option \"size\" of volume " + volume + " is not supported for type "
                     + type + " (only tmpfs)");
    }
    if (!is_size_value(size)) {
      return invalid("option \"size\" of volume " + volume + " is not a size: \"" + size + "\"");
    }
    if (find_element(elements, "size") != nullptr) {
      return invalid("volume " + volume + " sets the size twice (option size and o=size=)");
    }
    elements.push_back(element{"size", "size=" + size, size});
  }
  if (auto ns = find_element(elements, "netns"); ns != nullptr) {
    plan.netns = ns->value;
    elements.erase(std::remove_if(elements.begin(), elements.end(),
                                  [](const element& e) { return e.key == "netns"; }),
                   elements.end());
  }

  // -- per kind: device checks and the plan --
  switch (plan.kind) {
    case local_kind::directory:
      break;
    case local_kind::tmpfs:
      if (!device.empty() && !is_valid_label(device)) {
        return invalid("device \"" + device + "\" of volume " + volume
                       + " must be a tmpfs label (letters, digits, _ . -, not beginning with -)");
      }
      plan.fstype = "tmpfs";
      plan.device = device.empty() ? "tmpfs" : device;
      to_flags_and_data(elements, plan);
      break;
    case local_kind::bind:
      if (!is_clean_absolute_path(device)) {
        return invalid("device \"" + device + "\" of volume " + volume
                       + " must be an absolute host directory without \"..\"");
      }
      if (type == "none" && find_element(elements, "bind") == nullptr
          && find_element(elements, "rbind") == nullptr) {
        return invalid("type \"none\" of volume " + volume + " needs o=bind or o=rbind");
      }
      plan.fstype = "none";
      plan.device = device;
      plan.flags = MS_BIND;
      to_flags_and_data(elements, plan);
      plan.data.clear(); // bind mounts take no data
      break;
    case local_kind::block:
      if (!is_clean_absolute_path(device) || device.compare(0, 5, "/dev/") != 0) {
        return invalid("device \"" + device + "\" of volume " + volume
                       + " must be a block device path under /dev/");
      }
      plan.fstype = type;
      plan.device = device;
      to_flags_and_data(elements, plan);
      break;
    case local_kind::nfs:
      if (auto err = plan_nfs(volume, type, device, elements, plan)) {
        return err;
      }
      break;
    case local_kind::efs:
      if (auto err = plan_efs(volume, device, efs_id, efs_path, elements, env, plan)) {
        return err;
      }
      break;
  }
  return plan;
}

std::vector<std::string> helper_command(const mount_plan& plan, const std::string& mountpoint) {
  std::vector<std::string> argv;
  if (!plan.netns.empty()) {
    argv = {"nsenter", "--net=" + plan.netns};
  }
  if (!argv.empty()) {
    argv.push_back("--"); // nsenter's own options end here
  }
  argv.insert(argv.end(), {"mount", "-t", plan.fstype});
  if (!plan.data.empty()) {
    argv.insert(argv.end(), {"-o", plan.data});
  }
  // `--`: the device and mountpoint are never read as options (run_helper checks too).
  argv.insert(argv.end(), {"--", plan.device, mountpoint});
  return argv;
}

} // namespace berth
