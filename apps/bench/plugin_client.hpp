#pragma once

// A Docker volume plugin client for berth-bench: one keep-alive connection,
// one call per method, errors folded into a string.

#include <memory>
#include <string>
#include <vector>

#include "protocols/http/unix_http_client.hpp"

namespace berth::bench {

/// Result of one plugin call: `ok` when the reply was 200 with an empty Err.
struct call_result {
  bool ok = false;
  std::string err;  ///< what went wrong, when !ok
  std::string body; ///< the raw reply body (not kept by list and list_count)
};

/// One client of the plugin socket. Not thread-safe: one per thread.
class plugin_client {
public:
  explicit plugin_client(std::string socket_path);

  call_result create(const std::string& name);
  call_result remove(const std::string& name);
  call_result mount(const std::string& name, const std::string& id);
  call_result unmount(const std::string& name, const std::string& id);

  /// VolumeDriver.List; on success `names` holds every volume name.
  call_result list(std::vector<std::string>& names);

  /// VolumeDriver.List; on success `count` is how many volumes it names, counted in
  /// the one parse that checks Err, without a string built per volume.
  call_result list_count(size_t& count);

  /// POSTs `body` to `/VolumeDriver.<endpoint>` (or any path starting with '/').
  call_result call(const std::string& endpoint, const std::string& body);

private:
  /// Sends, and reads the answer (into reply_) in one pass: Err, and the volumes of a
  /// List's Volumes array, counted and, with `names`, kept.
  call_result exchange(const std::string& endpoint, const std::string& body,
                       std::vector<std::string>* names, size_t* count);

  std::string socket_path_;
  std::unique_ptr<unix_http_client> http_;
  /// The last answer's body: its storage is reused for the next answer, so a List of
  /// 10,000 volumes (some 400 KB) does not take a fresh block each time.
  std::string reply_;
};

} // namespace berth::bench
