#pragma once

// CSI node paths (staging and target paths) are confined to the kubelet
// directory (--kubelet-dir; docs/design.md, "Only what berth owns"): berth
// mounts, unmounts and deletes only there. The CSI adapter checks a request's
// paths with confine_node_path, and the block backend checks them again before
// any side effect (ownership is checked where the side effect happens), so
// neither relies on the other.

#include <string>

#include <caf/expected.hpp>

namespace berth {

/// Where kubelet keeps staging and target paths unless --kubelet-dir says otherwise.
inline constexpr const char* default_kubelet_dir = "/var/lib/kubelet";

/// Resolves `path` the way the kernel will when it mounts there: the symlinks of
/// its parent are resolved (realpath(3) of the deepest ancestor that exists; the
/// components below it do not exist, so they cannot be links), then the last
/// component is appended as it is. Returns that canonical path.
///
/// ec::invalid_argument, naming `field` (e.g. "staging_target_path") and the
/// path, when `path` is not a clean absolute path, when its last component is a
/// symlink (a mount through it would land elsewhere), or when the canonical path
/// does not lie strictly below realpath(`kubelet_dir`). Touches nothing.
caf::expected<std::string> confine_node_path(const std::string& path,
                                             const std::string& kubelet_dir,
                                             const std::string& field);

/// The canonical spelling of `path` as confine_node_path makes it, whether or
/// not it lies under the kubelet dir; `path` itself when it cannot be resolved.
/// For comparisons only (a path with a symlinked parent against mountinfo or
/// against a record).
std::string canonical_node_path(const std::string& path);

} // namespace berth
