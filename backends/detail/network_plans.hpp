#pragma once

// Planning the network kinds of local volume: NFS (type nfs or nfs4) and EFS
// (type efs, or an nfs device naming an fs-XXXX file system). Both are mounted by
// a helper (mount.nfs, mount.efs), so every check here keeps an argument from
// being read as an option.

#include <string>
#include <vector>

#include <caf/error.hpp>

#include "backends/detail/mount_elements.hpp"
#include "backends/local_options.hpp"

namespace berth::detail {

/// The elements only EFS accepts (amazon-efs-utils' own options).
const name_set& efs_only_elements();

/// "fs-0123abcd" or "fs-0123abcd:/path" -> id and path ("/" by default).
bool parse_efs_device(const std::string& device, std::string& id, std::string& path);

/// type nfs or nfs4: the device and the elements checked, the plan for mount.nfs.
caf::error plan_nfs(const std::string& volume, const std::string& type, const std::string& device,
                    const std::vector<element>& elements, mount_plan& plan);

/// type efs (or an nfs device that names an EFS file system): the file system ID and
/// path checked, the plan for amazon-efs-utils, or for plain NFSv4 without it.
caf::error plan_efs(const std::string& volume, const std::string& device, std::string efs_id,
                    std::string efs_path, const std::vector<element>& elements,
                    const efs_environment& env, mount_plan& plan);

} // namespace berth::detail
