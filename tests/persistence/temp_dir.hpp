#pragma once

// A fresh directory under /tmp for one test, removed with everything in it afterwards.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace berth::test {

/// Creates /tmp/berth-persist-XXXXXX; removes it when destroyed.
class temp_dir {
public:
  temp_dir() {
    std::string tmpl = "/tmp/berth-persist-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
      throw std::runtime_error("mkdtemp failed");
    }
    path_ = tmpl;
  }
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  /// The directory itself.
  const std::string& path() const {
    return path_;
  }

  /// `path()/name`.
  std::string operator/(const std::string& name) const {
    return path_ + "/" + name;
  }

private:
  std::string path_;
};

/// Writes `text` to `path`, replacing it.
inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

/// The whole content of `path` (empty when missing).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace berth::test
