#include "backends/detail/block_parameters.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "backends/loop_device.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"

namespace berth {

const char* const block_mutable_keys = "readAheadKB, directIO";

namespace {

const std::string read_ahead_key = "readAheadKB";
const std::string direct_io_key = "directIO";

/// The kernel keeps read-ahead in whole pages.
uint64_t page_kb() {
  long page = ::sysconf(_SC_PAGESIZE);
  return page >= 1024 ? static_cast<uint64_t>(page) / 1024 : 4;
}

/// `value` quoted for a message, cut short when long.
std::string quoted(const std::string& value) {
  constexpr size_t shown = 64;
  return "\"" + (value.size() <= shown ? value : value.substr(0, shown) + "...") + "\"";
}

caf::error bad_value(const std::string& what, const std::string& key, const std::string& value,
                     const std::string& allowed) {
  return make_error(ec::invalid_argument, what + ": mutable parameter " + key + "="
                                            + quoted(value) + " is not allowed (" + allowed + ")");
}

std::string read_ahead_allowed() {
  return "a whole number of KiB from 0 to " + std::to_string(limits::max_read_ahead_kb)
         + ", a multiple of the page size, " + std::to_string(page_kb()) + " KiB";
}

/// The parameter's value as the device takes it: KiB, or 1/0 for directIO. Only
/// the form is checked here (the bounds are validate_mutable's): a value the device
/// had before is put back even when berth would not have chosen it.
caf::expected<uint64_t> parsed(const std::string& key, const std::string& value,
                               const std::string& what) {
  if (key == direct_io_key) {
    if (value != "true" && value != "false") {
      return bad_value(what, key, value, "true or false");
    }
    return value == "true" ? 1 : 0;
  }
  if (key == read_ahead_key) {
    // At most 9 digits: no overflow, and far above any bound.
    if (value.empty() || value.size() > 9
        || value.find_first_not_of("0123456789") != std::string::npos) {
      return bad_value(what, key, value, read_ahead_allowed());
    }
    return std::stoull(value);
  }
  return make_error(ec::invalid_argument, what + ": unknown mutable parameter " + quoted(key)
                                            + " (the block backend's are " + block_mutable_keys
                                            + ")");
}

/// The device's value of `key` in the form a parameter has ("true", "256").
std::string shown(const std::string& key, uint64_t value) {
  if (key == direct_io_key) {
    return value != 0 ? "true" : "false";
  }
  return std::to_string(value);
}

/// The device's current value of `key`, as parsed() gives it.
caf::expected<uint64_t> current(const std::string& device, const std::string& key) {
  if (key == direct_io_key) {
    auto on = loop_direct_io(device);
    if (!on) {
      return on.error();
    }
    return *on ? 1 : 0;
  }
  return loop_read_ahead_kb(device);
}

caf::error set(const std::string& device, const std::string& key, uint64_t value) {
  if (key == direct_io_key) {
    return set_loop_direct_io(device, value != 0);
  }
  return set_loop_read_ahead_kb(device, value);
}

} // namespace

bool is_block_mutable_key(const std::string& key) {
  return key == read_ahead_key || key == direct_io_key;
}

bool wants_direct_io(const option_map& parameters) {
  auto it = parameters.find(direct_io_key);
  return it == parameters.end() || it->second != "false";
}

caf::error check_block_parameter(const std::string& key, const std::string& value,
                                 const std::string& what) {
  auto n = parsed(key, value, what);
  if (!n) {
    return n.error();
  }
  // One spelling per value ("0128" is not "128"): the record compares values as text.
  if (key == read_ahead_key
      && (*n > limits::max_read_ahead_kb || *n % page_kb() != 0 || value != std::to_string(*n))) {
    return bad_value(what, key, value, read_ahead_allowed());
  }
  return {};
}

caf::expected<option_map> block_parameters_of(const std::string& device, const option_map& keys,
                                              const std::string& what) {
  option_map out;
  for (const auto& kv : keys) {
    if (!is_block_mutable_key(kv.first)) {
      continue;
    }
    auto now = current(device, kv.first);
    if (!now) {
      return make_error(ec::backend_failure, what + ": cannot read " + kv.first + " of " + device
                                               + ": " + describe(now.error()));
    }
    out[kv.first] = shown(kv.first, *now);
  }
  return out;
}

caf::error apply_block_parameters(const std::string& device, const option_map& parameters,
                                  const std::string& what) {
  struct change {
    std::string key;
    uint64_t before;
  };
  std::vector<change> done;
  auto undo = [&] {
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      if (auto err = set(device, it->key, it->before)) {
        spdlog::error("{}: could not put {} of {} back to {}: {}", what, it->key, device,
                      it->before, describe(err));
      }
    }
  };
  for (const auto& kv : parameters) {
    if (auto form = parsed(kv.first, kv.second, what); !form) {
      return form.error();
    }
  }
  // directIO first: the kernel may refuse it, and then nothing has changed yet.
  for (const auto& key : {direct_io_key, read_ahead_key}) {
    auto it = parameters.find(key);
    if (it == parameters.end()) {
      continue;
    }
    const std::string& value = it->second;
    auto want = parsed(key, value, what);
    if (!want) {
      undo();
      return want.error();
    }
    auto before = current(device, key);
    if (!before) {
      undo();
      return make_error(ec::backend_failure, what + ": cannot apply " + key + "=" + value
                                               + " to " + device + ": "
                                               + describe(before.error()));
    }
    if (*before == *want) {
      continue;
    }
    if (auto err = set(device, key, *want)) {
      undo();
      const bool refused =
        key == direct_io_key && static_cast<ec>(err.code()) == ec::invalid_argument;
      return make_error(static_cast<ec>(err.code()),
                        what + ": cannot apply " + key + "=" + value + " to " + device + ": "
                          + describe(err)
                          + (refused ? "; keep directIO=false, or keep block images (--block-dir) "
                                       "on a filesystem that can do O_DIRECT"
                                     : ""));
    }
    done.push_back({key, *before});
    spdlog::info("{}: {}={} applied to {}", what, key, value, device);
  }
  return {};
}

caf::error probe_block_parameters(const std::string& image, const option_map& parameters,
                                  const std::string& what) {
  auto it = parameters.find(direct_io_key);
  if (it == parameters.end() || it->second != "true") {
    return {};
  }
  int fd = ::open(image.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0) {
    ::close(fd);
    return {};
  }
  int e = errno;
  if (e == EINVAL) {
    return make_error(ec::invalid_argument,
                      what + ": cannot apply directIO=true: the filesystem of " + image
                        + " cannot do O_DIRECT (open: " + std::strerror(e)
                        + "); keep directIO=false, or keep block images (--block-dir) on a "
                          "filesystem that can");
  }
  return make_error(ec::backend_failure, what + ": cannot check directIO=true on " + image
                                           + ": open: " + std::strerror(e));
}

} // namespace berth
