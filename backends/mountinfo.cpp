#include "backends/mountinfo.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/errors.hpp"

namespace berth {

namespace {

/// Calls `fn(line, number)` for every non-empty line of the file at `path`,
/// until `fn` returns false. Reads in 64 KiB chunks into one small buffer: a
/// fresh multi-megabyte buffer per call costs more in page faults than parsing.
template <class F>
caf::error for_each_file_line(const std::string& path, F fn) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return make_error(ec::backend_failure,
                      "cannot open " + path + ": " + std::strerror(errno));
  }
  std::string buf(64 * 1024, '\0');
  size_t used = 0;   // bytes in buf
  size_t number = 0; // line number
  bool eof = false;
  bool go_on = true;
  while (go_on && !eof) {
    if (used == buf.size()) {
      buf.resize(buf.size() * 2); // a line longer than the buffer
    }
    ssize_t n = ::read(fd, buf.data() + used, buf.size() - used);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      int err = errno;
      ::close(fd);
      return make_error(ec::backend_failure,
                        "cannot read " + path + ": " + std::strerror(err));
    }
    eof = n == 0;
    used += static_cast<size_t>(n);
    std::string_view rest(buf.data(), used);
    while (go_on) {
      size_t nl = rest.find('\n');
      if (nl == std::string_view::npos && !(eof && !rest.empty())) {
        break;
      }
      std::string_view line = rest.substr(0, nl);
      rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
      ++number;
      if (!line.empty()) {
        go_on = fn(line, number);
      }
    }
    std::memmove(buf.data(), rest.data(), rest.size());
    used = rest.size();
  }
  ::close(fd);
  return {};
}

/// Splits off the next space-separated field of `line`.
std::string_view next_field(std::string_view& line) {
  size_t start = line.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    line = {};
    return {};
  }
  line.remove_prefix(start);
  size_t end = line.find(' ');
  std::string_view field = line.substr(0, end);
  line.remove_prefix(end == std::string_view::npos ? line.size() : end);
  return field;
}

bool to_int(std::string_view s, int& out) {
  auto res = std::from_chars(s.data(), s.data() + s.size(), out);
  return res.ec == std::errc{} && res.ptr == s.data() + s.size();
}

bool is_octal(char c) {
  return c >= '0' && c <= '7';
}

/// Calls `fn(line, number)` for every non-empty line.
template <class F>
void for_each_line(std::string_view text, F fn) {
  size_t number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++number;
    if (!line.empty()) {
      if (!fn(line, number)) {
        return;
      }
    }
  }
}

} // namespace

std::string unescape_mountinfo(std::string_view field) {
  if (field.find('\\') == std::string_view::npos) {
    return std::string(field);
  }
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && is_octal(field[i + 1])
        && is_octal(field[i + 2]) && is_octal(field[i + 3])) {
      int v = (field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0');
      out.push_back(static_cast<char>(v));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

namespace {

/// Parses one mountinfo line into `e`; an error names `origin` and the line.
caf::error parse_line(std::string_view line, size_t number, const std::string& origin,
                      mount_entry& e) {
  const std::string_view whole = line;
  auto bad = [&](const char* what) {
    return make_error(ec::backend_failure, origin + " line " + std::to_string(number) + ": "
                                             + what + ": \"" + std::string(whole) + "\"");
  };
  if (!to_int(next_field(line), e.id) || !to_int(next_field(line), e.parent)) {
    return bad("bad mount or parent ID");
  }
  std::string_view dev = next_field(line); // major:minor
  if (dev.find(':') == std::string_view::npos) {
    return bad("missing device number");
  }
  std::string_view root = next_field(line);
  std::string_view point = next_field(line);
  std::string_view opts = next_field(line);
  if (opts.empty()) {
    return bad("too few fields");
  }
  for (;;) { // optional fields end at "-"
    std::string_view f = next_field(line);
    if (f.empty()) {
      return bad("no \"-\" separator");
    }
    if (f == "-") {
      break;
    }
  }
  std::string_view fstype = next_field(line);
  std::string_view source = next_field(line);
  std::string_view super = next_field(line);
  if (fstype.empty()) {
    return bad("no filesystem type");
  }
  e.dev = std::string(dev);
  e.root = unescape_mountinfo(root);
  e.mount_point = unescape_mountinfo(point);
  e.options = std::string(opts);
  e.fstype = unescape_mountinfo(fstype);
  e.source = unescape_mountinfo(source);
  e.super_options = unescape_mountinfo(super);
  return {};
}

/// The fifth field, the mount point, unescaped.
std::string_view raw_mount_point(std::string_view line) {
  for (int i = 0; i < 4; ++i) {
    next_field(line);
  }
  return next_field(line);
}

} // namespace

caf::expected<std::vector<mount_entry>> parse_mountinfo(std::string_view text,
                                                        const std::string& origin) {
  std::vector<mount_entry> entries;
  // One exact allocation: growing a vector of 10,000 entries costs more than parsing them.
  entries.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  caf::error failure;
  for_each_line(text, [&](std::string_view line, size_t number) {
    entries.emplace_back();
    failure = parse_line(line, number, origin, entries.back());
    return !failure;
  });
  if (failure) {
    return failure;
  }
  return entries;
}

caf::expected<std::vector<mount_entry>> read_mountinfo(const std::string& path) {
  std::string text;
  text.reserve(256 * 1024);
  auto err = for_each_file_line(path, [&](std::string_view line, size_t) {
    text.append(line.data(), line.size());
    text.push_back('\n');
    return true;
  });
  if (err) {
    return err;
  }
  return parse_mountinfo(text, path);
}

caf::expected<std::set<std::string>> read_mount_points(const std::string& path) {
  std::set<std::string> points;
  caf::error failure;
  auto err = for_each_file_line(path, [&](std::string_view line, size_t number) {
    std::string_view point = raw_mount_point(line);
    if (point.empty()) {
      failure = make_error(ec::backend_failure,
                           path + " line " + std::to_string(number) + ": too few fields");
      return false;
    }
    points.insert(unescape_mountinfo(point));
    return true;
  });
  if (err) {
    return err;
  }
  if (failure) {
    return failure;
  }
  return points;
}

bool operator==(const mount_origin& a, const mount_origin& b) {
  return a.dev == b.dev && a.root == b.root;
}

std::vector<const mount_entry*> mounts_at(const std::vector<mount_entry>& mounts,
                                          const std::string& mount_point) {
  std::vector<const mount_entry*> here;
  for (const auto& e : mounts) {
    if (e.mount_point == mount_point) {
      here.push_back(&e);
    }
  }
  // The bottom one's parent is not at this mount point; each next one's parent
  // is the one below it. Anything left (a cycle cannot happen) keeps file order.
  std::vector<const mount_entry*> stack;
  auto parent_here = [&](const mount_entry* e) {
    return std::any_of(here.begin(), here.end(), [&](const mount_entry* o) {
      return o != e && o->id == e->parent;
    });
  };
  for (auto* e : here) {
    if (!parent_here(e)) {
      stack.push_back(e);
      break;
    }
  }
  while (!stack.empty() && stack.size() < here.size()) {
    auto below = stack.back()->id;
    // A mount already stacked is never taken again: with repeated IDs or a mount its own
    // parent, it would stand in for another mount, which then went missing.
    auto next = std::find_if(here.begin(), here.end(), [&](const mount_entry* o) {
      return o->parent == below && std::find(stack.begin(), stack.end(), o) == stack.end();
    });
    if (next == here.end()) {
      break;
    }
    stack.push_back(*next);
  }
  if (stack.size() != here.size()) {
    return here;
  }
  return stack;
}

mount_origin origin_of(const mount_entry& e) {
  return {e.dev, e.root};
}

std::optional<mount_origin> origin_of(const std::vector<mount_entry>& mounts,
                                      const std::string& path) {
  std::string at = path;
  for (;;) {
    auto here = mounts_at(mounts, at);
    if (!here.empty()) {
      auto origin = origin_of(*here.back());
      auto rest = path.substr(at == "/" ? 0 : at.size()); // "" or "/a/b"
      if (!rest.empty() && rest != "/") {
        origin.root = (origin.root == "/" ? "" : origin.root) + rest;
      }
      return origin;
    }
    if (at == "/") {
      return std::nullopt;
    }
    auto slash = at.rfind('/');
    at = slash == 0 ? "/" : at.substr(0, slash);
  }
}

std::string dev_string(unsigned long long rdev) {
  return std::to_string(major(rdev)) + ":" + std::to_string(minor(rdev));
}

bool is_read_only(const std::string& options) {
  size_t start = 0;
  while (start <= options.size()) {
    auto comma = options.find(',', start);
    auto opt = options.substr(start, comma == std::string::npos ? std::string::npos
                                                                : comma - start);
    if (opt == "ro") {
      return true;
    }
    if (comma == std::string::npos) {
      break;
    }
    start = comma + 1;
  }
  return false;
}

std::string mount_at_or_under(const std::set<std::string>& points, const std::string& dir) {
  for (const auto& p : points) {
    if (p == dir || p.compare(0, dir.size() + 1, dir + "/") == 0) {
      return p;
    }
  }
  return {};
}

bool is_mounted(const std::string& mount_point) {
  bool found = false;
  auto err = for_each_file_line("/proc/self/mountinfo", [&](std::string_view line, size_t) {
    found = unescape_mountinfo(raw_mount_point(line)) == mount_point;
    return !found;
  });
  return !err && found;
}

bool is_mount_point(const std::string& path) {
  struct statx stx {};
  if (::statx(AT_FDCWD, path.c_str(), AT_STATX_DONT_SYNC, STATX_TYPE, &stx) != 0) {
    return errno == ENOENT || errno == ENOTDIR ? false : is_mounted(path);
  }
  if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0) {
    return (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
  }
  return is_mounted(path);
}

} // namespace berth
