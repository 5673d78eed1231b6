// Fuzzes mountinfo parsing (backends/mountinfo.hpp), which every ownership check reads
// before berth unmounts anything. Oracles: the file reader and the in-memory parser
// agree, and read_mount_points gives the same mount points; every parsed entry,
// written back with mountinfo's escapes, parses to an equal entry; mounts_at returns
// exactly the entries at that mount point, each once; origin_of finds a mount for
// every absolute path below a parsed mount point.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

#include "backends/mountinfo.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace berth;

namespace {

bool same(const mount_entry& a, const mount_entry& b) {
  return a.id == b.id && a.parent == b.parent && a.dev == b.dev && a.root == b.root
         && a.mount_point == b.mount_point && a.options == b.options && a.fstype == b.fstype
         && a.source == b.source && a.super_options == b.super_options;
}

/// Writes `s` as the kernel does: space, tab, newline and backslash as octal escapes.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case ' ': out += "\\040"; break;
      case '\t': out += "\\011"; break;
      case '\n': out += "\\012"; break;
      case '\\': out += "\\134"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string line_of(const mount_entry& e) {
  std::string out = std::to_string(e.id) + " " + std::to_string(e.parent) + " " + e.dev + " "
                    + escape(e.root) + " " + escape(e.mount_point) + " " + e.options
                    + " shared:1 - " + escape(e.fstype);
  if (!e.source.empty()) {
    out += " " + escape(e.source);
  }
  if (!e.super_options.empty()) {
    out += " " + escape(e.super_options);
  }
  return out + "\n";
}


void check_file_reader(const std::string& text, const caf::expected<std::vector<mount_entry>>& mem) {
  auto path = fuzz::scratch_file(text.data(), text.size());
  auto file = read_mountinfo(path);
  fuzz::check(static_cast<bool>(file) == static_cast<bool>(mem),
              "the file reader and the parser agree on success");
  if (!file) {
    return;
  }
  fuzz::check(file->size() == mem->size(), "the file reader and the parser find as many entries");
  std::set<std::string> points;
  for (size_t i = 0; i < mem->size(); ++i) {
    fuzz::check(same((*file)[i], (*mem)[i]), "the file reader and the parser agree", line_of((*mem)[i]));
    points.insert((*mem)[i].mount_point);
  }
  auto only_points = read_mount_points(path);
  fuzz::check(only_points && *only_points == points, "read_mount_points finds the same points");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto entries = parse_mountinfo(text, "fuzz");
  check_file_reader(text, entries);
  if (!entries) {
    return 0;
  }
  std::string written;
  for (const auto& e : *entries) {
    written += line_of(e);
  }
  auto back = parse_mountinfo(written, "written");
  fuzz::check(static_cast<bool>(back) && back->size() == entries->size(),
              "written entries parse", written);
  for (size_t i = 0; i < entries->size(); ++i) {
    fuzz::check(same((*back)[i], (*entries)[i]), "a written entry parses to itself", written);
  }
  for (const auto& e : *entries) {
    auto here = mounts_at(*entries, e.mount_point);
    auto expected = std::count_if(entries->begin(), entries->end(), [&](const mount_entry& o) {
      return o.mount_point == e.mount_point;
    });
    fuzz::check(static_cast<long>(here.size()) == expected, "mounts_at finds every mount there",
                e.mount_point);
    for (size_t i = 0; i < here.size(); ++i) {
      fuzz::check(here[i]->mount_point == e.mount_point, "mounts_at returns mounts there only");
      fuzz::check(std::count(here.begin(), here.end(), here[i]) == 1,
                  "mounts_at returns each mount once", e.mount_point);
    }
    if (!e.mount_point.empty() && e.mount_point[0] == '/') {
      auto below = e.mount_point + (e.mount_point == "/" ? "x" : "/x");
      fuzz::check(origin_of(*entries, below).has_value(), "a path below a mount point has an origin",
                  below);
    }
  }
  return 0;
}
