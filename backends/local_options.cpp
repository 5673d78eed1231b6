#include "backends/local_options.hpp"

#include <algorithm>
#include <cctype>

#include <sys/mount.h>

#include "backends/detail/mount_elements.hpp"
#include "backends/detail/network_plans.hpp"
#include "backends/detail/root_ownership.hpp"
#include "core/docker_source.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"

namespace berth {

namespace {

using detail::element;
using detail::find_element;
using detail::join_elements;
using detail::name_set;
using detail::split_o;

// -- allow-lists --------------------------------------------------------------

const name_set top_level = {"type",    "device", "o",       "size",          "uid",
                            "gid",     "mode",   "backend", "from-snapshot", "clone-of"};

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

} // namespace

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

caf::error validate_local_options(const std::string& volume, const option_map& options) {
  efs_environment any; // validation does not depend on the host
  any.helper_installed = true;
  auto plan = plan_local_mount(volume, options, any);
  return plan ? caf::error{} : plan.error();
}

caf::expected<mount_plan> plan_local_mount(const std::string& volume, const option_map& options,
                                           const efs_environment& env) {
  auto invalid = [&](const std::string& msg) { return make_error(ec::invalid_argument, msg); };
  for (const auto& [key, value] : options) {
    if (top_level.count(key) == 0) {
      return invalid("unknown option \"" + key + "\" for volume " + volume
                     + " (allowed: type, device, o, size, uid, gid, mode, backend, from-snapshot, "
                       "clone-of)");
    }
    if (value.empty()) {
      return invalid("option \"" + key + "\" of volume " + volume + " is empty");
    }
    if (has_control_char(value)) {
      return invalid("option \"" + key + "\" of volume " + volume + " contains a control character");
    }
    if (key == "backend" && value != "local") {
      return invalid("option backend=" + quote_input(value) + " of volume " + volume
                     + " does not name this backend (local)");
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
                     + " is not supported on a plain directory, which has no quota: give "
                     + "-o backend=block for a volume of that size, or type=tmpfs for memory");
    }
    const bool copy = options.count(docker_from_snapshot_key) + options.count(docker_clone_of_key) > 0;
    if (copy && detail::names_root_ownership(options)) {
      return invalid("options uid, gid and mode of volume " + volume + " cannot be given with "
                     "from-snapshot or clone-of: a copy keeps its source's owner and mode");
    }
    auto root = detail::parse_root_ownership(volume, options);
    if (!root) {
      return root.error();
    }
    plan.kind = local_kind::directory;
    plan.flags = MS_BIND;
    plan.root = *root;
    return plan;
  }
  for (const char* key : {docker_from_snapshot_key, docker_clone_of_key}) {
    if (options.count(key) > 0) {
      return invalid(std::string("option ") + key + " of volume " + volume + " makes a copy of a "
                     "plain directory volume, which has no type=; leave type out");
    }
  }
  if (detail::names_root_ownership(options)) {
    return invalid("options uid, gid and mode of volume " + volume + " apply to a plain directory volume only"
                   + (type == "tmpfs" ? std::string(" (for type tmpfs, give them in o=, as o=uid=1000,gid=1000,mode=0750)")
                                      : " (type " + type + " mounts a filesystem that keeps its own owner and mode)"));
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
    plan.kind = detail::parse_efs_device(device, efs_id, efs_path) ? local_kind::efs : local_kind::nfs;
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
              || (plan.kind == local_kind::efs && detail::efs_only_elements().count(e.key) > 0);
    if (!ok) {
      std::string list = detail::join_names(*allowed);
      if (plan.kind == local_kind::efs) {
        list += ", " + detail::join_names(detail::efs_only_elements());
      }
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
      if (auto err = detail::plan_nfs(volume, type, device, elements, plan)) {
        return err;
      }
      break;
    case local_kind::efs:
      if (auto err = detail::plan_efs(volume, device, efs_id, efs_path, elements, env, plan)) {
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
