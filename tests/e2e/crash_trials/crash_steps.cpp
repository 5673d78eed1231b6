#include "tests/e2e/crash_trials/crash_steps.hpp"

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace berth::crash_trials {

namespace fs = std::filesystem;

namespace {

bool skipped_dir(const fs::path& dir) {
  auto name = dir.filename().string();
  return name == "tests" || name == ".git" || name.rfind("build", 0) == 0;
}

bool cxx_source(const fs::path& file) {
  auto ext = file.extension().string();
  return ext == ".cpp" || ext == ".hpp" || ext == ".cc" || ext == ".h";
}

} // namespace

std::vector<std::string> crash_steps_in(const std::string& root) {
  static const std::regex call{R"(test_crash_point\(\s*"([^"]+)\"\s*\))"};
  std::set<std::string> steps;
  std::error_code err;
  for (auto it = fs::recursive_directory_iterator(root, err); !err && it != fs::end(it);
       it.increment(err)) {
    if (it->is_directory() && skipped_dir(it->path())) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !cxx_source(it->path())) {
      continue;
    }
    std::ifstream in(it->path());
    std::stringstream text;
    text << in.rdbuf();
    auto s = text.str();
    for (std::sregex_iterator m(s.begin(), s.end(), call), end; m != end; ++m) {
      steps.insert((*m)[1].str());
    }
  }
  return {steps.begin(), steps.end()};
}

} // namespace berth::crash_trials
