#pragma once

#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "backends/detail/root_ownership.hpp"
#include "core/volume_record.hpp"

namespace berth {

/// How a local volume is mounted, decided by its `type` option.
enum class local_kind {
  directory, ///< no `type`: the volume's data/ bind-mounted with mount(2)
  tmpfs,     ///< mount(2), `size` and `o` into the data string
  bind,      ///< `type=bind` (or Docker's `type=none,o=bind`): a host directory
  block,     ///< ext4, xfs, btrfs on a /dev/... device, mount(2)
  nfs,       ///< nfs, nfs4: exec mount(8), which resolves addresses
  efs,       ///< efs (or nfs/nfs4 of an fs-XXXX device): mount.efs or plain nfs4
};

/// Everything needed to mount a local volume; derived from options only.
struct mount_plan {
  local_kind kind = local_kind::directory;
  std::string fstype;        ///< for mount(2), or `mount -t`
  std::string device;        ///< source; empty for `directory` (the backend fills in data/)
  unsigned long flags = 0;   ///< MS_* flags for mount(2)
  std::string data;          ///< options for mount(2)'s data or the helper's `-o`
  std::string netns;         ///< run the helper inside this network namespace
  bool use_helper = false;   ///< exec mount(8) instead of calling mount(2)
  std::vector<std::string> warnings; ///< things that cannot be honoured, for the log
  detail::root_ownership root; ///< `directory` only: the owner and mode data/ gets at create
};

/// What the host offers for EFS.
struct efs_environment {
  bool helper_installed = false; ///< mount.efs (amazon-efs-utils) is present
  std::string default_region;    ///< AWS_REGION / AWS_DEFAULT_REGION, may be empty
};

/// Probes the host: mount.efs in PATH or /sbin, and the AWS region variables.
efs_environment probe_efs_environment();

/// Checks Docker-local-style options (`type`, `device`, `o`, `size`, and `uid`, `gid`,
/// `mode` of a plain directory) against the
/// allow-lists; every error names the volume and the offending option or element.
caf::error validate_local_options(const std::string& volume, const option_map& options);

/// Validates `options` and turns them into a mount plan for this host.
caf::expected<mount_plan> plan_local_mount(const std::string& volume,
                                           const option_map& options,
                                           const efs_environment& env);

/// The helper command for a plan with use_helper: [nsenter --net=NS] mount -t T [-o D] DEV MNT.
std::vector<std::string> helper_command(const mount_plan& plan, const std::string& mountpoint);

/// True for a host name (RFC 1123 labels, at most 253 bytes), an IPv4 address, or
/// an IPv6 address in brackets ("[fd00::1]"): what may precede ":/path" in an nfs
/// device. Never begins with '-'.
bool is_valid_nfs_host(const std::string& host);

/// True when `path` is `dir` or lies under it, or `dir` lies under `path` (both
/// absolute and resolved). A bind of such a path would put `dir` in a container.
bool overlaps(const std::string& path, const std::string& dir);

/// True for an absolute path with no "." or ".." component.
bool is_clean_absolute_path(const std::string& path);

} // namespace berth
