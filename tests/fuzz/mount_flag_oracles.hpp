#pragma once

// The oracles the csi_requests target holds every mount flag list to: the codec's
// one-flag-per-entry rule, and what the block backend's parser
// (backends/detail/block_mount_flags.hpp) may make of any list before mount(2) gets it.

#include <sys/mount.h>

#include <string>
#include <vector>

#include "backends/detail/block_mount_flags.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace berth::fuzz {

/// The MS_* bits berth's flag table may set: access times, nodev, nosuid, noexec,
/// sync and read-only. Nothing that binds, moves, remounts or changes propagation.
constexpr unsigned long allowed_bits = MS_RDONLY | MS_NOATIME | MS_NODIRATIME | MS_RELATIME
                                       | MS_STRICTATIME | MS_LAZYTIME | MS_NODEV | MS_NOSUID
                                       | MS_NOEXEC | MS_SYNCHRONOUS | MS_DIRSYNC;

inline std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    auto comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos
                                                             : comma - start));
    if (comma == std::string::npos) {
      return out;
    }
    start = comma + 1;
  }
}

/// Any list of flags (a record's stage flags may hold ',') through the block parser.
inline void check_flag_parse(const std::vector<std::string>& flags) {
  auto a = parse_block_mount_flags(flags, "volume f");
  auto b = parse_block_mount_flags(flags, "volume f");
  check(static_cast<bool>(a) == static_cast<bool>(b), "the flag parser is deterministic");
  std::vector<std::string> given;
  for (const auto& entry : flags) {
    for (auto& f : split_commas(entry)) {
      if (!f.empty()) {
        given.push_back(f);
      }
    }
  }
  if (!a) {
    return;
  }
  check(a->flags == b->flags && a->data == b->data, "the flag parser is deterministic");
  check((a->flags & ~allowed_bits) == 0, "only the table's MS_* bits",
              std::to_string(a->flags));
  for (const auto& f : given) {
    check(f[0] != '-', "a flag beginning with '-' is refused", f);
  }
  if (a->data.empty()) {
    return;
  }
  for (const auto& element : split_commas(a->data)) {
    bool was_given = false;
    for (const auto& f : given) {
      was_given = was_given || f == element;
    }
    check(was_given, "every data element is a flag given", a->data);
    check(element[0] != '-' && element.find('/') == std::string::npos
                  && !has_control_char(element),
                "no data element is an option or names a path", element);
  }
}

/// Flags the codec passed (check_mount_flags): one flag per entry, bounded.
inline void check_codec_flags(const std::vector<std::string>& flags) {
  check(flags.size() <= limits::max_mount_flags, "at most max_mount_flags");
  for (const auto& f : flags) {
    check(!f.empty() && f.size() <= limits::max_mount_flag_bytes
                  && f.find(',') == std::string::npos && !has_control_char(f),
                "a passed flag is one bounded flag", f);
  }
  check_flag_parse(flags);
}

} // namespace berth::fuzz
