#pragma once

// Keeps wait_state::busy equal to what the local berthd has staged or published: asks
// its admin API every `period`, and at once when the VolumeAttachments change.

#include <chrono>
#include <memory>
#include <string>

#include "apps/prestop/detail/wait_state.hpp"

namespace berth::drain {

/// Runs until st->stop or `deadline` (blocking: start it on a thread of its own).
/// A berthd that does not answer counts as still holding volumes (logged once).
void poll_local(const std::string& admin_socket, const std::shared_ptr<detail::wait_state>& st,
                std::chrono::steady_clock::time_point deadline,
                std::chrono::milliseconds period);

/// "a (staged), b (1 target)", or "none".
std::string describe(const std::vector<busy_volume>& busy);

} // namespace berth::drain
