#pragma once

// Whether a dockerd instance berth recorded (a dockerd_key, "PID@STARTTICKS") still runs.

#include <string>

#include "actors/release_rules.hpp"

namespace berth::docker_sync {

/// True when process PID exists and /proc/PID/stat gives it start time STARTTICKS: the same
/// process, not a later one that reused the pid. False for "" and anything else.
/// @param proc_root "/proc"; tests pass a directory of their own.
bool dockerd_alive(const dockerd_key& key, const std::string& proc_root = "/proc");

} // namespace berth::docker_sync
