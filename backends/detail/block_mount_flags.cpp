#include "backends/detail/block_mount_flags.hpp"

#include <map>
#include <set>

#include <sys/mount.h>

#include "core/errors.hpp"

namespace berth {

namespace {

/// Generic flags: bits to set (and to clear, for the opposites).
struct flag_bits {
  unsigned long set;
  unsigned long clear;
};

const std::map<std::string, flag_bits>& generic_flags() {
  static const std::map<std::string, flag_bits> table = {
    {"defaults", {0, 0}},
    {"ro", {MS_RDONLY, 0}},
    {"rw", {0, MS_RDONLY}},
    {"noatime", {MS_NOATIME, MS_RELATIME | MS_STRICTATIME}},
    {"atime", {0, MS_NOATIME}},
    {"nodiratime", {MS_NODIRATIME, 0}},
    {"diratime", {0, MS_NODIRATIME}},
    {"relatime", {MS_RELATIME, MS_NOATIME | MS_STRICTATIME}},
    {"norelatime", {0, MS_RELATIME}},
    {"strictatime", {MS_STRICTATIME, MS_NOATIME | MS_RELATIME}},
    {"lazytime", {MS_LAZYTIME, 0}},
    {"nolazytime", {0, MS_LAZYTIME}},
    {"nodev", {MS_NODEV, 0}},
    {"dev", {0, MS_NODEV}},
    {"nosuid", {MS_NOSUID, 0}},
    {"suid", {0, MS_NOSUID}},
    {"noexec", {MS_NOEXEC, 0}},
    {"exec", {0, MS_NOEXEC}},
    {"sync", {MS_SYNCHRONOUS, 0}},
    {"async", {0, MS_SYNCHRONOUS}},
    {"dirsync", {MS_DIRSYNC, 0}},
  };
  return table;
}

/// xfs and ext4 options passed through as data (the filesystem checks them).
const std::set<std::string>& data_flags() {
  static const std::set<std::string> table = {
    "discard", "nodiscard", "nouuid", "inode32", "inode64", "largeio", "nolargeio",
    "noquota", "quota", "usrquota", "grpquota", "prjquota", "uquota", "gquota", "pquota",
    "user_xattr", "nouser_xattr", "acl", "noacl", "barrier", "nobarrier",
    "journal_checksum", "nojournal_checksum", "dax", "nodelalloc", "delalloc",
  };
  return table;
}

/// key=value data options: the keys, and the values each allows ("#": digits
/// with an optional k/m/g suffix).
const std::map<std::string, std::set<std::string>>& data_keys() {
  static const std::map<std::string, std::set<std::string>> table = {
    {"data", {"ordered", "writeback", "journal"}},
    {"errors", {"continue", "remount-ro", "panic"}},
    {"commit", {"#"}},
    {"allocsize", {"#"}},
    {"logbufs", {"#"}},
    {"logbsize", {"#"}},
    {"stripe", {"#"}},
  };
  return table;
}

bool is_size(const std::string& v) {
  if (v.empty() || v.size() > 20) {
    return false;
  }
  size_t digits = 0;
  while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') {
    ++digits;
  }
  if (digits == 0) {
    return false;
  }
  if (digits == v.size()) {
    return true;
  }
  return digits + 1 == v.size() && std::string("kKmMgG").find(v.back()) != std::string::npos;
}

} // namespace

void append_mount_data(std::string& data, const std::string& option) {
  if (!data.empty()) {
    data += ',';
  }
  data += option;
}

block_mount_options with_online_discard(block_mount_options opts) {
  const std::string options = "," + opts.data + ",";
  if (options.find(",discard,") == std::string::npos
      && options.find(",nodiscard,") == std::string::npos) {
    append_mount_data(opts.data, "discard");
  }
  return opts;
}

caf::expected<block_mount_options> parse_block_mount_flags(const std::vector<std::string>& flags,
                                                           const std::string& what) {
  block_mount_options out;
  for (const auto& entry : flags) {
    size_t start = 0;
    while (start <= entry.size()) {
      size_t comma = entry.find(',', start);
      std::string flag = entry.substr(start, comma == std::string::npos ? std::string::npos
                                                                         : comma - start);
      start = comma == std::string::npos ? entry.size() + 1 : comma + 1;
      if (flag.empty()) {
        continue;
      }
      if (auto it = generic_flags().find(flag); it != generic_flags().end()) {
        out.flags = (out.flags & ~it->second.clear) | it->second.set;
        continue;
      }
      if (data_flags().count(flag) != 0) {
        append_mount_data(out.data, flag);
        continue;
      }
      auto eq = flag.find('=');
      if (eq != std::string::npos) {
        auto key = data_keys().find(flag.substr(0, eq));
        std::string value = flag.substr(eq + 1);
        if (key != data_keys().end()
            && (key->second.count(value) != 0 || (key->second.count("#") != 0 && is_size(value)))) {
          append_mount_data(out.data, flag);
          continue;
        }
      }
      return make_error(ec::invalid_argument,
                        what + ": mount flag \"" + flag + "\" is not allowed");
    }
  }
  return out;
}

} // namespace berth
