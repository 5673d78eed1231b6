#!/usr/bin/env bash
# A Debian 12 (bookworm) minbase root, made from Debian's own packages with debootstrap and
# kept as a tarball in a cache, for what must start from a clean Debian: the berthd image's
# base when no image registry is reachable, a chroot to install the .deb in.
#
#   scripts/debian-base.sh tarball        # last line: the tarball's path
#   scripts/debian-base.sh docker-image   # also imports it as debian:bookworm-slim into the
#                                         # dockerd DOCKER_HOST names (when it lacks one);
#                                         # last line: the image
#
# BERTH_CACHE_DIR (default /var/cache/berth-build) holds the tarball. debootstrap takes about
# a minute; a second call on the same machine only finds the tarball. Callers may run at once
# (two tests): one makes it under a lock, the others wait and use it. It is written under a
# temporary name and renamed, so a killed run never leaves a half tarball under the real one.
# Needs root (debootstrap), and debootstrap itself (scripts/install-deps.sh --test).
set -euo pipefail

mode="${1:-tarball}"
if [[ "$mode" != tarball && "$mode" != docker-image ]]; then
  echo "usage: $0 tarball|docker-image" >&2
  exit 2
fi

cache="${BERTH_CACHE_DIR:-/var/cache/berth-build}"
mirror="http://deb.debian.org/debian"
image="debian:bookworm-slim"
# The name says what is inside: a change to how it is made needs a new name.
tarball="$cache/debian-bookworm-minbase-v1.tar"

mkdir -p "$cache"
exec 9>"$cache/debian-base.lock"
flock 9

if [[ ! -s "$tarball" ]]; then
  command -v debootstrap >/dev/null || {
    echo "debian-base: needs debootstrap (apt-get install debootstrap)" >&2
    exit 1
  }
  # What a killed run left (under the lock nobody else is making one).
  for old in "$cache"/.debian-base.*; do
    [[ -d "$old" ]] || continue
    umount -R "$old/root/proc" "$old/root/sys" 2>/dev/null || true
    rm -rf --one-file-system "$old"
  done
  work=$(mktemp -d "$cache/.debian-base.XXXXXX")
  # A failed or interrupted run leaves nothing behind (the root may hold proc or sys mounts).
  # (errexit holds inside a trap too: the umounts of what is not mounted must not stop it.)
  trap 'umount -R "$work/root/proc" "$work/root/sys" 2>/dev/null || true; rm -rf --one-file-system "$work"' EXIT
  echo "debian-base: debootstrap --variant=minbase bookworm from $mirror (about a minute)" >&2
  debootstrap --variant=minbase bookworm "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -n 20 "$work/debootstrap.log" >&2
    echo "debian-base: debootstrap failed (log above)" >&2
    exit 1
  }
  # As Debian's own images: point apt at the updates and security suites too (deb.debian.org
  # serves debian-security), and keep no package lists or downloaded .debs in the root.
  cat >"$work/root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  rm -rf "$work/root"/var/lib/apt/lists/* "$work/root"/var/cache/apt/archives/*.deb \
    "$work/root"/var/log/bootstrap.log
  tar -C "$work/root" --numeric-owner --xattrs -cf "$work/base.tar" .
  mv "$work/base.tar" "$tarball"
  echo "debian-base: made $tarball" >&2
fi

if [[ "$mode" == docker-image ]]; then
  # The imported image is kept too (docker save) and loaded into the next dockerd, rather than
  # imported again: an import is stamped with its time, so a second one is another image, and
  # an image built on the first one (scripts/image.sh) could no longer seed docker's layer cache.
  saved="$cache/debian-bookworm-slim-image-v1.tar"
  if ! docker image inspect "$image" >/dev/null 2>&1; then
    if [[ -s "$saved" && "$saved" -nt "$tarball" ]]; then
      docker load -i "$saved" >/dev/null
      echo "debian-base: loaded $image from $saved" >&2
    else
      # Debian's own images run bash when given no command; so does this one.
      docker import --change 'CMD ["bash"]' "$tarball" "$image" >/dev/null
      docker save -o "$saved.tmp.$$" "$image"
      mv "$saved.tmp.$$" "$saved"
      echo "debian-base: imported $tarball as $image (kept as $saved)" >&2
    fi
  fi
  echo "$image"
else
  echo "$tarball"
fi
