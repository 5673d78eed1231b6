#include "backends/node_path.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <sys/stat.h>

#include "backends/local_options.hpp"
#include "core/errors.hpp"

namespace berth {

namespace {

/// realpath(3) of `path`, or "" with errno set.
std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) {
    return "";
  }
  return buf;
}

/// realpath of the deepest existing ancestor of `path` (clean, absolute, not
/// "/"), joined with the components below it. "" when resolving fails for
/// another reason than a missing component.
std::string resolve_parent(const std::string& path) {
  auto slash = path.rfind('/');
  std::string parent = slash == 0 ? "/" : path.substr(0, slash);
  std::string rest = path.substr(slash); // "/last"
  for (;;) {
    auto real = real_path(parent);
    if (!real.empty()) {
      return (real == "/" ? "" : real) + rest;
    }
    if (errno != ENOENT || parent == "/") {
      return "";
    }
    slash = parent.rfind('/');
    rest = parent.substr(slash) + rest;
    parent = slash == 0 ? "/" : parent.substr(0, slash);
  }
}

} // namespace

caf::expected<std::string> confine_node_path(const std::string& path,
                                             const std::string& kubelet_dir,
                                             const std::string& field) {
  auto refuse = [&](const std::string& why) {
    return make_error(ec::invalid_argument, field + " \"" + path + "\" " + why);
  };
  if (!is_clean_absolute_path(path) || path == "/" || path.find("//") != std::string::npos
      || path.back() == '/') {
    return refuse("is not a clean absolute path");
  }
  auto root = real_path(kubelet_dir);
  if (root.empty()) {
    int e = errno;
    return refuse("cannot be checked: the kubelet directory " + kubelet_dir
                  + " (--kubelet-dir) cannot be resolved: " + std::strerror(e));
  }
  auto canonical = resolve_parent(path);
  if (canonical.empty()) {
    int e = errno;
    return refuse("cannot be resolved: " + std::string(std::strerror(e)));
  }
  struct stat st {};
  if (::lstat(canonical.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    return refuse("is a symbolic link; berth mounts only on a real directory or file");
  }
  auto prefix = root == "/" ? std::string("/") : root + "/";
  if (canonical.size() <= prefix.size() || canonical.compare(0, prefix.size(), prefix) != 0) {
    return refuse((canonical == path ? std::string() : "(resolved to " + canonical + ") ")
                  + "is not below the kubelet directory " + kubelet_dir
                  + "; berth acts only on node paths there (see --kubelet-dir)");
  }
  return canonical;
}

std::string canonical_node_path(const std::string& path) {
  if (!is_clean_absolute_path(path) || path == "/" || path.find("//") != std::string::npos
      || path.back() == '/') {
    return path;
  }
  auto canonical = resolve_parent(path);
  return canonical.empty() ? path : canonical;
}

} // namespace berth
