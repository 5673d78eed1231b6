#pragma once

// The check after a restart: berthd's records (the admin API), the host's mounts
// (/proc/self/mountinfo) and loop devices (losetup -J), held against the model.
//
//   - every slot is as its answered requests left it, or, when a request was in
//     flight at the kill, as that request would have left it;
//   - every shared count lies between the acknowledged Mounts minus the acknowledged
//     Unmounts, less the Unmounts in flight, and the same plus the Mounts in flight;
//   - nothing is mounted under the trial's directory that no record holds, and
//     every mount a record holds is there; no loop device of the trial's images is
//     attached that no staged record names, and each one a record names is.

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "core/volume_record.hpp"
#include "tests/e2e/crash_trials/workload.hpp"

namespace berth::crash_trials {

/// What berthd and the host have, read once.
struct observed {
  std::vector<volume_record> records;
  std::vector<std::string> mount_points; ///< under the trial's root, once per mount
  std::vector<std::pair<std::string, std::string>> loops; ///< device, backing file under root
};

/// Waits (60 s at most) until no loop device of an image under `root` has its
/// detach deferred: berth never sets autoclear, but LOOP_CLR_FD (the loop sweep's)
/// on a device another process still holds sets it, and the kernel detaches the
/// device at that process's last close. Returns "" when none was pending, else a
/// line naming each device, who held it, and how long the wait took ("still ..."
/// when one remains).
std::string wait_deferred_detaches(const std::string& root);

/// Reads the records over the admin socket and the host's mounts and loop devices
/// under `root`; an error names what could not be read.
caf::expected<observed> observe(const std::string& admin_socket, const std::string& root);

/// Every way `seen` differs from `model`, one line each ("" lines: none).
std::vector<std::string> compare(const trial_model& model, const observed& seen);

} // namespace berth::crash_trials
