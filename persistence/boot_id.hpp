#pragma once

#include <string>

namespace berth {

/// The kernel's boot ID (changes at every boot); empty when it cannot be read.
std::string read_boot_id(const std::string& path = "/proc/sys/kernel/random/boot_id");

} // namespace berth
