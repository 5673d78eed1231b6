#pragma once

// The block backend's mutable parameters (CSI mutable_parameters, berthctl modify):
// what they accept, and how they are applied to a volume's loop device.
//
//   readAheadKB  /sys/block/loopN/queue/read_ahead_kb   0 .. limits::max_read_ahead_kb,
//                                                       a multiple of the page size in KiB
//   directIO     LOOP_SET_DIRECT_IO (sysfs: loop/dio)   "true" or "false"

#include <string>

#include <caf/error.hpp>

#include "core/volume_record.hpp"

namespace berth {

/// The keys, as messages list them: "readAheadKB, directIO".
extern const char* const block_mutable_keys;

/// True for a key the block backend takes as a mutable parameter.
bool is_block_mutable_key(const std::string& key);

/// Whether a device is attached with direct I/O: unless `parameters` say directIO=false,
/// the opt-out for images on a filesystem where it cannot be had (tmpfs, say).
bool wants_direct_io(const option_map& parameters);

/// ec::invalid_argument naming `what`, the key, the value and what the key allows,
/// unless `value` is one the mutable parameter `key` takes. `key` is one for which
/// is_block_mutable_key holds.
caf::error check_block_parameter(const std::string& key, const std::string& value,
                                 const std::string& what);

/// The values `device` has now of the mutable parameters among the keys of `keys`,
/// in a parameter's form ("true", "256"): what to put back after a failure.
caf::expected<option_map> block_parameters_of(const std::string& device, const option_map& keys,
                                              const std::string& what);

/// Applies `parameters` to the attached loop device `device`, directIO first: it is
/// the one the kernel may refuse. Only their form is checked here (an unknown key or
/// a malformed value fails before anything changes; bounds are check_block_parameter's).
/// When one fails, those already applied are put back as they were, and the error
/// names `what`, the parameter, its value and the reason.
caf::error apply_block_parameters(const std::string& device, const option_map& parameters,
                                  const std::string& what);

/// For an image no loop device backs: refuses (ec::invalid_argument, as
/// apply_block_parameters would once attached) directIO=true when the image's
/// filesystem cannot open it with O_DIRECT. Nothing else can be checked detached.
caf::error probe_block_parameters(const std::string& image, const option_map& parameters,
                                  const std::string& what);

} // namespace berth
