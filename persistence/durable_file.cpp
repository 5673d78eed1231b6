#include "persistence/durable_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.hpp"

namespace berth::durable {

bool& last_failure_was_no_space() {
  thread_local bool no_space = false;
  return no_space;
}

caf::error io_error(const std::string& what, const std::string& path, int err) {
  last_failure_was_no_space() = err == ENOSPC || err == EDQUOT;
  return make_error(ec::persist_failure, what + " " + path + ": " + std::strerror(err));
}

caf::error read_fd(int fd, const std::string& path, std::string& out) {
  out.clear();
  char buf[1 << 16];
  off_t offset = 0;
  for (;;) {
    auto n = ::pread(fd, buf, sizeof(buf), offset);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return io_error("cannot read", path, errno);
    }
    if (n == 0) {
      return {};
    }
    out.append(buf, static_cast<size_t>(n));
    offset += n;
  }
}

caf::error read_file(const std::string& path, std::string& out, bool& found) {
  found = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return errno == ENOENT ? caf::error{} : io_error("cannot open", path, errno);
  }
  auto err = read_fd(fd, path, out);
  ::close(fd);
  found = !err;
  return err;
}

caf::error write_all(int fd, const char* data, size_t size, off_t offset,
                     const std::string& path) {
  while (size > 0) {
    auto n = ::pwrite(fd, data, size, offset);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return io_error("cannot write", path, errno);
    }
    data += n;
    size -= static_cast<size_t>(n);
    offset += n;
  }
  return {};
}

caf::error fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return io_error("cannot open directory", dir, errno);
  }
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  return rc == 0 ? caf::error{} : io_error("cannot fsync directory", dir, err);
}

caf::error write_temp_file(const std::string& tmp, const std::string& text) {
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return io_error("cannot create", tmp, errno);
  }
  auto err = write_all(fd, text.data(), text.size(), 0, tmp);
  if (!err && ::fsync(fd) != 0) {
    err = io_error("cannot fsync", tmp, errno);
  }
  if (::close(fd) != 0 && !err) {
    err = io_error("cannot close", tmp, errno);
  }
  if (err) {
    ::unlink(tmp.c_str());
  }
  return err;
}

caf::error write_file_atomically(const std::string& dir, const std::string& path,
                                 const std::string& text) {
  auto tmp = path + ".tmp";
  if (auto err = write_temp_file(tmp, text)) {
    return err;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    auto err = io_error("cannot rename to", path, errno);
    ::unlink(tmp.c_str());
    return err;
  }
  return fsync_dir(dir);
}

caf::error ensure_dir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    return S_ISDIR(st.st_mode) ? caf::error{} : io_error("cannot use", dir, ENOTDIR);
  }
  auto parent = std::filesystem::path(dir).parent_path();
  if (parent.empty()) {
    parent = ".";
  }
  std::error_code fs_err;
  std::filesystem::create_directories(parent, fs_err);
  if (fs_err) {
    return make_error(ec::persist_failure,
                      "cannot create " + parent.string() + ": " + fs_err.message());
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return io_error("cannot create", dir, errno);
  }
  return fsync_dir(parent.string());
}

} // namespace berth::durable
