#include "tests/csi/host_probe.hpp"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace berth::csi_test {

namespace {

/// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (size_t k = 1; k <= 3; ++k) {
        char c = s[i + k];
        if (c < '0' || c > '7') {
          ok = false;
          break;
        }
        v = v * 8 + (c - '0');
      }
      if (ok) {
        out.push_back(static_cast<char>(v));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool at_or_below(const std::string& path, const std::string& dir) {
  return path == dir || path.compare(0, dir.size() + 1, dir + "/") == 0;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) {
    s.pop_back();
  }
  return s;
}

} // namespace

std::vector<mount_entry> read_mountinfo() {
  std::vector<mount_entry> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    std::string word;
    while (fields >> word) {
      f.push_back(word);
    }
    auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 7 || dash == f.end() || std::distance(dash, f.end()) < 3) {
      continue;
    }
    mount_entry e;
    e.dev = f[2];
    e.root = unescape(f[3]);
    e.mount_point = unescape(f[4]);
    e.options = f[5];
    e.fstype = *(dash + 1);
    e.source = unescape(*(dash + 2));
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<mount_entry> mount_at(const std::string& path) {
  std::optional<mount_entry> top;
  for (auto& e : read_mountinfo()) {
    if (e.mount_point == path) {
      top = e; // later lines are mounted on top of earlier ones
    }
  }
  return top;
}

std::vector<std::string> mounts_under(const std::string& dir) {
  std::vector<std::string> out;
  for (auto& e : read_mountinfo()) {
    if (at_or_below(e.mount_point, dir)) {
      out.push_back(e.mount_point);
    }
  }
  return out;
}

std::string loop_backing_file(const std::string& device) {
  auto name = std::filesystem::path(device).filename().string();
  std::ifstream in("/sys/block/" + name + "/loop/backing_file");
  if (!in) {
    return "";
  }
  std::string file;
  std::getline(in, file);
  return trim(file);
}

std::vector<std::string> loops_under(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code err;
  for (auto& entry : std::filesystem::directory_iterator("/sys/block", err)) {
    auto name = entry.path().filename().string();
    if (name.compare(0, 4, "loop") != 0) {
      continue;
    }
    auto file = loop_backing_file("/dev/" + name);
    // A deleted image reads "PATH (deleted)": the prefix still names the dir.
    if (!file.empty() && at_or_below(file.substr(0, file.find(" (deleted)")), dir)) {
      out.push_back("/dev/" + name);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<fs_size> statvfs_of(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) {
    return std::nullopt;
  }
  fs_size s;
  s.total_bytes = static_cast<uint64_t>(st.f_blocks) * st.f_frsize;
  s.free_bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  s.total_inodes = st.f_files;
  return s;
}

std::optional<uint64_t> block_device_bytes(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) {
    return std::nullopt;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::nullopt;
  }
  uint64_t bytes = 0;
  int rc = ::ioctl(fd, BLKGETSIZE64, &bytes);
  ::close(fd);
  if (rc != 0) {
    return std::nullopt;
  }
  return bytes;
}

int write_file_sync(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return errno;
  }
  int result = 0;
  if (::write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size())) {
    result = errno != 0 ? errno : EIO;
  } else if (::fsync(fd) != 0) {
    result = errno;
  }
  ::close(fd);
  return result;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string clean_under(const std::string& dir) {
  std::string problems;
  for (int round = 0; round < 8; ++round) {
    auto points = mounts_under(dir);
    if (points.empty()) {
      break;
    }
    // Deepest first: a longer path can only be below a shorter one, never above.
    std::sort(points.begin(), points.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    for (auto& p : points) {
      ::umount2(p.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
    }
  }
  for (auto& p : mounts_under(dir)) {
    problems += "still mounted: " + p + "; ";
  }
  for (auto& dev : loops_under(dir)) {
    int fd = ::open(dev.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || (::ioctl(fd, LOOP_CLR_FD, 0) != 0 && errno != ENXIO)) {
      // Still open (a lazy unmount not finished): LOOP_CLR_FD sets autoclear anyway.
      if (errno != EBUSY) {
        problems += "cannot detach " + dev + ": " + std::strerror(errno) + "; ";
      }
    }
    if (fd >= 0) {
      ::close(fd);
    }
  }
  // A device LOOP_CLR_FD found busy (its filesystem lazily unmounted above and not yet
  // released) is only marked autoclear: the kernel detaches it once the last reference goes,
  // a moment later. Wait for that (bounded), so the caller's check sees the outcome and
  // not the race; one still attached after 5 s is reported by that check.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!loops_under(dir).empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return problems;
}

std::string clean_and_remove(const std::string& dir) {
  if (dir.empty() || dir == "/") {
    return "refusing to remove '" + dir + "'";
  }
  auto problems = clean_under(dir);
  if (!mounts_under(dir).empty()) {
    return problems + "not removing " + dir + " while something is mounted below it";
  }
  std::error_code err;
  std::filesystem::remove_all(dir, err);
  if (err) {
    problems += "remove " + dir + ": " + err.message();
  }
  return problems;
}

} // namespace berth::csi_test
