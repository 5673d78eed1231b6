#include "backends/detail/root_ownership.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.hpp"

namespace berth::detail {

namespace {

constexpr const char* keys[] = {"uid", "gid", "mode"};

caf::error invalid(const std::string& msg) {
  return make_error(ec::invalid_argument, msg);
}

/// Digits of `base` only, no sign, at most `max`.
std::optional<uint64_t> parse_number(const std::string& text, int base, uint64_t max) {
  if (text.empty() || text.size() > 10) {
    return std::nullopt;
  }
  uint64_t n = 0;
  for (char c : text) {
    int digit = c - '0';
    if (digit < 0 || digit >= base) {
      return std::nullopt;
    }
    n = n * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
  }
  return n <= max ? std::optional<uint64_t>(n) : std::nullopt;
}

} // namespace

bool names_root_ownership(const option_map& options) {
  for (const char* k : keys) {
    if (options.count(k) > 0) {
      return true;
    }
  }
  return false;
}

caf::expected<root_ownership> parse_root_ownership(const std::string& volume, const option_map& options) {
  root_ownership out;
  // 4294967295 is (uid_t)-1, which chown(2) reads as "leave it".
  constexpr uint64_t max_id = 4294967294u;
  for (auto [key, id] : {std::pair{"uid", &out.uid}, std::pair{"gid", &out.gid}}) {
    auto it = options.find(key);
    if (it == options.end()) {
      continue;
    }
    auto n = parse_number(it->second, 10, max_id);
    if (!n) {
      return invalid("option \"" + std::string(key) + "\" of volume " + volume + " is not a numeric id: \""
                     + it->second + "\" (give a decimal number from 0 to 4294967294, such as 1000)");
    }
    *id = static_cast<uint32_t>(*n);
  }
  if (auto it = options.find("mode"); it != options.end()) {
    auto n = it->second.size() >= 3 ? parse_number(it->second, 8, 07777) : std::nullopt;
    if (!n) {
      return invalid("option \"mode\" of volume " + volume + " is not an octal mode: \"" + it->second
                     + "\" (give three or four octal digits, such as 0750)");
    }
    out.mode = static_cast<uint32_t>(*n);
  }
  return out;
}

caf::error apply_root_ownership(const std::string& volume, const std::string& dir,
                                const root_ownership& root) {
  auto failed = [&](const std::string& what) {
    return make_error(ec::backend_failure,
                      "volume " + volume + ": cannot " + what + " " + dir + ": " + std::strerror(errno));
  };
  if (root.uid || root.gid) {
    uid_t uid = root.uid ? static_cast<uid_t>(*root.uid) : static_cast<uid_t>(-1);
    gid_t gid = root.gid ? static_cast<gid_t>(*root.gid) : static_cast<gid_t>(-1);
    if (::fchownat(AT_FDCWD, dir.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) != 0) {
      return failed("change the owner of");
    }
  }
  // After chown, which clears the set-id bits of what it changes.
  if (root.mode && ::chmod(dir.c_str(), static_cast<mode_t>(*root.mode)) != 0) {
    return failed("set the mode of");
  }
  return {};
}

} // namespace berth::detail
