#!/usr/bin/env bash
# Builds berth's managed Docker plugin and creates it in the dockerd DOCKER_HOST names.
#
#   scripts/plugin.sh [BUILD_DIR [NAME]]   # default build/, berth/berth-plugin:VERSION;
#                                          # last line: the plugin's name
#
# A managed plugin is a directory: deploy/docker-plugin/config.json, and rootfs/ beside it.
# The rootfs holds berthd, the helpers deploy/runtime/packages.txt names, their shared
# libraries, and the few files those helpers read (mke2fs.conf, the NSS and RPC tables
# mount.nfs looks names up in), and nothing else: no shell, no package manager. They are
# taken from the berthd image (scripts/image.sh, which this runs), so the plugin and the
# image carry the same binaries from the same list. The plugin is created disabled: set what
# needs setting (docker plugin set NAME state.source=/srv/berth), then docker plugin enable.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-$root/build}"
tag=$("$root/scripts/image.sh" "$build" | tail -n 1)
version=${tag##*:}
name="${2:-berth/berth-plugin:$version}"

work=$(mktemp -d)
cid=""
cleanup() {
  [[ -z "$cid" ]] || docker rm -f "$cid" >/dev/null 2>&1 || true
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
full="$work/image"
plugin="$work/plugin"
mkdir -p "$full" "$plugin/rootfs"
cid=$(docker create --network none "$tag")
docker export "$cid" | tar -C "$full" -xf -

# in_image CMD...: runs CMD in the image's tree (its own ldd, its own PATH).
in_image() {
  chroot "$full" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# The helpers: each line's comment up to its colon (the format packages.txt states).
helpers=$(sed -n 's/^[a-z0-9][^#]*#\([^:]*\):.*/\1/p' "$root/deploy/runtime/packages.txt" | xargs)
# One shell in the image's tree (its PATH, its ldd) prints every path the rootfs needs: berthd,
# each helper, the files the helpers read where the image has them, and every shared library
# of those binaries as the image's loader finds it; each by its real directory (bookworm's
# /bin, /sbin and /lib are links into /usr) and, for a link, the file it points to too.
in_image sh -c '
  set -e
  wanted=/usr/local/bin/berthd
  for h in '"$helpers"'; do
    p=$(command -v "$h") || { echo "plugin: $h is not in the image" >&2; exit 1; }
    wanted="$wanted $p"
  done
  libs=$(for b in $wanted; do ldd "$b" 2>/dev/null || true; done |
         awk '"'"'$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'"'"')
  for f in /etc/mke2fs.conf /etc/nsswitch.conf /etc/netconfig /etc/services /etc/protocols /etc/rpc; do
    [ -e "$f" ] && wanted="$wanted $f"
  done
  for p in $wanted $libs; do
    echo "$(readlink -f "$(dirname "$p")")/$(basename "$p")"
    readlink -f "$p"
  done' >"$work/paths"
list=()
for l in bin sbin lib lib32 lib64 libx32; do
  [[ -L "$full/$l" ]] && list+=("/$l")
done
{ cat "$work/paths"; printf '%s\n' "${list[@]}"; } | sed 's|^/||' | sort -u >"$work/files"
tar -C "$full" --no-recursion -cf - -T "$work/files" | tar -C "$plugin/rootfs" -xf -
# Mount points and berthd's own directories.
mkdir -p "$plugin/rootfs"/{dev,proc,sys,etc,run/docker/plugins,var/lib/berth,tmp}
chmod 1777 "$plugin/rootfs/tmp"
cp "$root/deploy/docker-plugin/config.json" "$plugin/config.json"

echo "plugin: rootfs of $(wc -l <"$work/files") files from $tag; docker plugin create $name" >&2
docker plugin create "$name" "$plugin" >&2
echo "$name"
