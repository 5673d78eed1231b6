#!/usr/bin/env bash
# berth as a managed Docker plugin (deploy/docker-plugin, scripts/plugin.sh) in a real,
# private dockerd:
#   (a) plugin.sh creates it (disabled) from the berthd image, with the socket berth.sock,
#       CAP_SYS_ADMIN and the propagated mount; its rootfs holds berthd, the helpers of
#       deploy/runtime/packages.txt and their libraries, and no shell or berthctl;
#   (b) docker plugin enable runs it, its state on a host directory (the settable mount
#       `state`); docker volume create -d PLUGIN makes a volume;
#   (c) a container writes, a second one reads what the first wrote;
#   (d) docker cp into and out of a running container keeps the volume mounted under it;
#   (e) disable and enable again keep the volume and its data;
#   (f) the volume and the plugin are removed at the end, and nothing stays mounted.
# The base tarball and the berthd image are cached in BERTH_CACHE_DIR (default
# /var/cache/berth-build), as for e2e.image.
#
#   usage: plugin_e2e.sh BERTHD BERTHCTL

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/dockerd_lib.sh"
source "$(dirname "$0")/image/lib.sh"

e2e_init "${1:-}" "${2:-}"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$(dirname "$BERTHD")/.." && pwd)
export BERTH_CACHE_DIR="${BERTH_CACHE_DIR:-/var/cache/berth-build}"
need_cmd debootstrap debootstrap

start_dockerd_for_images
make_busybox_image berth-e2e-busybox:1 || skip "cannot import the busybox image"
BB=berth-e2e-busybox:1

# -- (a) the plugin -----------------------------------------------------------------------
t0=$SECONDS
"$SRC/scripts/debian-base.sh" docker-image >/dev/null
timed "base (debootstrap, or the cached tarball)"
version=$("$BERTHD" --version | awk '{ print $2; exit }')
NAME="berth-e2e/plugin-$$:$version"
out=$("$SRC/scripts/plugin.sh" "$BUILD" "$NAME" 2>&1)
rc=$?
timed "plugin.sh (the image, cached, and the rootfs)"
check "(a) plugin.sh exits 0" 0 "$rc"
check "(a) plugin.sh prints the plugin's name last" "$NAME" "$(tail -n 1 <<<"$out")"
if ((rc != 0)); then
  echo "$out" | tail -n 30
  e2e_finish
fi
on_cleanup "timeout 60 $DOCKER_CLI plugin rm -f $NAME"
inspect() { dk plugin inspect -f "$1" "$NAME" 2>&1; }
check "(a) created disabled" false "$(inspect '{{.Enabled}}')"
check "(a) a volume driver on berth.sock" "[docker.volumedriver/1.0] berth.sock" \
  "$(inspect '{{.Config.Interface.Types}} {{.Config.Interface.Socket}}')"
check "(a) CAP_SYS_ADMIN, host network and PID, the propagated mount" \
  "[CAP_SYS_ADMIN] host true /var/lib/berth" \
  "$(inspect '{{.Config.Linux.Capabilities}} {{.Config.Network.Type}} {{.Config.PidHost}} {{.Config.PropagatedMount}}')"
ID=$(inspect '{{.Id}}')
ROOTFS="$DOCKER_DIR/data/plugins/$ID/rootfs"
check "(a) the rootfs holds this build's berthd" "$(sha256sum <"$BERTHD")" \
  "$(sha256sum <"$ROOTFS/usr/local/bin/berthd" 2>&1)"
missing=""
for h in $(package_helpers); do
  found=""
  for d in usr/local/sbin usr/local/bin usr/sbin usr/bin sbin bin; do
    [[ -x "$ROOTFS/$d/$h" ]] && found=1
  done
  [[ -n "$found" ]] || missing+=" $h"
done
check "(a) the rootfs holds every helper of packages.txt" "" "$missing"
check "(a) ... and no shell, package manager or berthctl" "" \
  "$(cd "$ROOTFS" && ls -d usr/bin/sh usr/bin/bash usr/bin/dash usr/bin/apt usr/bin/dpkg \
       usr/local/bin/berthctl 2>/dev/null | xargs)"
check "(a) every binary in it finds its libraries" "" \
  "$(for f in "$ROOTFS"/usr/local/bin/berthd "$ROOTFS"/usr/sbin/* "$ROOTFS"/usr/bin/*; do
       [[ -f "$f" && ! -L "$f" ]] || continue
       chroot "$ROOTFS" /lib64/ld-linux-x86-64.so.2 --list "${f#"$ROOTFS"}" 2>&1 | grep -F 'not found'
     done | xargs)"

# -- (b) enabled, with its state on the host ---------------------------------------------------
HOST_STATE="$E2E_TMP/plugin-state"
mkdir -p "$HOST_STATE"
check_ok "(b) docker plugin set: state dir, dockerd's socket, a free metrics port" \
  dk plugin set "$NAME" "state.source=$HOST_STATE" "docker-api.source=$DOCKER_DIR/docker.sock" \
  "args=--metrics-address=127.0.0.1:0"
check_ok "(b) docker plugin enable" dk plugin enable "$NAME"
# dockerd puts a managed plugin's sockets in /run/docker/plugins/ID (its own, fixed place,
# whatever --exec-root says); the entrypoint puts the admin socket beside berth.sock.
ADMIN="/run/docker/plugins/$ID/admin.sock"
ctl() { "$BERTHCTL" --socket "$ADMIN" "$@" 2>&1; }
if wait_until 30 test -S "$ADMIN"; then
  pass "(b) berthctl's socket is at $ADMIN"
else
  fail "(b) berthctl's socket is at $ADMIN" "$(tail -n 20 "$DOCKER_DIR/dockerd.log")"
fi
check_ok "(b) docker volume create -d PLUGIN" dk volume create -d "$NAME" pv
check "(b) the volume's driver is the plugin" "$NAME" "$(dk volume inspect -f '{{.Driver}}' pv 2>&1)"
check_nonempty "(b) its record is in the host's state dir" \
  "$(ls "$HOST_STATE/state/" 2>/dev/null | xargs)"
timed "enable and create"

# -- (c) one container writes, another reads ------------------------------------------------
check_ok "(c) a container writes to the volume" \
  dk run --rm --network none -v pv:/data "$BB" sh -c 'echo written-by-the-first > /data/f'
check "(c) a second container reads it" "written-by-the-first" \
  "$(dk run --rm --network none -v pv:/data "$BB" cat /data/f 2>&1)"
check "(c) the data lives in the host's state dir" "written-by-the-first" \
  "$(cat "$HOST_STATE/volumes/pv/data/f" 2>&1)"
check "(c) after both exited, nothing holds the volume" "false {}" \
  "$(json_get "$(ctl inspect pv --json)" '"%s %s" % (str(d["mounted"]).lower(), json.dumps(d["mounts"]))' 2>&1)"

# -- (d) docker cp keeps the mount --------------------------------------------------------
HOLDER="holder-$$"
dk run -d --name "$HOLDER" --network none -v pv:/data "$BB" sleep 600 >/dev/null
mounted_for_holder() { [[ "$(dk exec "$HOLDER" cat /data/f 2>&1)" == written-by-the-first ]]; }
if wait_until 30 mounted_for_holder; then
  pass "(d) a running container sees the volume"
else
  fail "(d) a running container sees the volume" "$(dk logs "$HOLDER" 2>&1 | tail -5)"
fi
# dockerd mounts the volume where the plugin said, below the propagated mount's host side.
PROPAGATED="$DOCKER_DIR/data/plugins/$ID/propagated-mount/volumes/pv/mnt"
# (The state mount is a bind of a host directory, so a peer of the host's mount there: each
# mount berthd makes reaches the host more than once, stacked. Any is enough for dockerd.)
mounted_on_host() { awk -v p="$PROPAGATED" '$5 == p { n++ } END { print (n > 0 ? "yes" : "no") }' /proc/self/mountinfo; }
check "(d) the volume is mounted on the host where dockerd looks for it" yes "$(mounted_on_host)"
echo copied-in >"$E2E_TMP/copied"
check_ok "(d) docker cp into the running container's volume" dk cp "$E2E_TMP/copied" "$HOLDER:/data/copied"
check "(d) docker cp out of it" "written-by-the-first" \
  "$(dk cp "$HOLDER:/data/f" - 2>/dev/null | tar -xOf - f 2>&1)"
check "(d) after both copies the container still has the volume" "copied-in" \
  "$(dk exec "$HOLDER" cat /data/copied 2>&1)"
check "(d) ... and it is still mounted on the host" yes "$(mounted_on_host)"
check "(d) berthd counts one mount ID, the container's, once" "true [1]" \
  "$(json_get "$(ctl inspect pv --json)" '"%s %s" % (str(d["mounted"]).lower(), list(d["mounts"].values()))' 2>&1)"
dk rm -f "$HOLDER" >/dev/null
unmounted_on_host() { [[ "$(mounted_on_host)" == no ]]; }
if wait_until 30 unmounted_on_host; then
  pass "(d) the container's removal unmounts the volume"
else
  fail "(d) the container's removal unmounts the volume" "still mounted at $PROPAGATED"
fi
timed "containers and docker cp"

# -- (e) disable and enable keep the volume and its data ------------------------------------------
# A plugin that volumes name is "in use": disabling it needs -f (the volume stays dockerd's).
check_ok "(e) docker plugin disable -f" dk plugin disable -f "$NAME"
check "(e) disabled" false "$(inspect '{{.Enabled}}')"
check "(e) the data is still in the host's state dir" "written-by-the-first" \
  "$(cat "$HOST_STATE/volumes/pv/data/f" 2>&1)"
check_ok "(e) docker plugin enable again" dk plugin enable "$NAME"
check "(e) the volume is listed again" "pv" "$(dk volume ls -q --filter "driver=$NAME" 2>&1 | xargs)"
check "(e) a new container reads both files" "written-by-the-first copied-in" \
  "$(dk run --rm --network none -v pv:/data "$BB" cat /data/f /data/copied 2>&1 | xargs)"
timed "disable and enable"

# -- (f) removal ----------------------------------------------------------------------------
check_ok "(f) docker volume rm" dk volume rm pv
check "(f) berthd forgot it" "" "$(json_get "$(ctl volumes --json)" '" ".join(v["name"] for v in d)' 2>&1)"
check_ok "(f) docker plugin disable" dk plugin disable "$NAME"
check_ok "(f) docker plugin rm" dk plugin rm "$NAME"
check "(f) the plugin is gone" "" "$(dk plugin ls -q 2>&1)"
check "(f) nothing of it stays mounted" 0 \
  "$(awk -v d="$DOCKER_DIR/data/plugins/" 'index($5, d) == 1' /proc/self/mountinfo | wc -l)"
timed "removal"

print_timings
e2e_finish
