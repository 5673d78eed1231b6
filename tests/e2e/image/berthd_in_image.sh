#!/usr/bin/env bash
# berthd, run from the berthd image instead of the build: tests/csi's berthd_process starts
# this in place of berthd ($BERTHD), so the CSI conformance suite runs against the image.
#
#   BERTH_IMAGE=berth/berthd:0.1.0 DOCKER_HOST=unix:///... berthd_in_image.sh BERTHD-ARGS...
#
# The suite passes --state-dir ROOT/state and --kubelet-dir ROOT/kubelet of one temp dir
# ROOT. ROOT is bound into the container at the same path with rshared propagation (as
# deploy/kubernetes binds /var/lib/kubelet Bidirectional), on a shared mount of the host (a
# bind of ROOT onto itself where the mount that holds it is not shared): the mounts berthd
# makes inside reach the host, where the suite looks for them, and the paths mean the same
# on both sides.
#
# Signals: this process becomes `docker run` (exec), which passes SIGTERM on to berthd, PID 1
# of the container, and exits with berthd's status. A SIGKILL of it (the suite's crash) cannot
# be passed on, so a watcher SIGKILLs the container once this process is gone; the next start
# on the same ROOT removes a container still left.
set -euo pipefail

: "${BERTH_IMAGE:?BERTH_IMAGE names the image to run}"
state=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --state-dir) state="${args[i + 1]:-}" ;;
    --state-dir=*) state="${args[i]#--state-dir=}" ;;
  esac
done
if [[ "${1:-}" == --version || "${1:-}" == --help ]]; then
  exec docker run --rm "$BERTH_IMAGE" "$@"
fi
[[ -n "$state" ]] || { echo "berthd_in_image: no --state-dir among $*" >&2; exit 2; }
root=$(dirname "$state")
name="berth-csi-$(basename "$root")"

docker rm -f "$name" >/dev/null 2>&1 || true
# Where the mount that holds ROOT is shared already (systemd makes / shared), nothing is
# needed, and nothing of the wrapper's shows among the mounts below ROOT that the suite counts.
if [[ "$(findmnt -no PROPAGATION --target "$root")" != shared* ]] && ! mountpoint -q "$root"; then
  mount --bind "$root" "$root"
  mount --make-rshared "$root"
fi

setsid bash -c 'while kill -0 "$0" 2>/dev/null; do sleep 0.1; done
                docker rm -f "$1" >/dev/null 2>&1' "$$" "$name" </dev/null >/dev/null 2>&1 &

# --network none: berthd needs no network for CSI, and the metrics port stays in the
# container. /dev: loop devices made after the start appear only in the host's.
# BERTH_IMAGE_PRIVILEGE, one docker run argument a line: --privileged, or what stands for it
# where the host cannot grant every capability (image_e2e.sh decides, and says so).
mapfile -t privilege <<<"${BERTH_IMAGE_PRIVILEGE:---privileged}"
exec docker run --rm --name "$name" --label dev.berth.test=csi-in-image \
  "${privilege[@]}" --network none \
  --mount "type=bind,source=$root,target=$root,bind-propagation=rshared" \
  --mount type=bind,source=/dev,target=/dev \
  "$BERTH_IMAGE" "$@"
