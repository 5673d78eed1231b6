#!/usr/bin/env bash
# Builds the berthd container image (deploy/image/Dockerfile) from a build directory and tags
# it berth/berthd:VERSION, VERSION being what that berthd --version says.
#
#   scripts/image.sh [BUILD_DIR]      # default build/; last line: the tag
#
# It talks to the dockerd DOCKER_HOST names. The base, debian:bookworm-slim, comes from
# that dockerd or its registry; with no registry, make it first: scripts/debian-base.sh
# docker-image. The build context is a staging directory holding only what the Dockerfile
# copies. RUN steps use the host's network (--network host): a dockerd without a bridge
# (--bridge=none) gives a build container no other way to reach Debian's mirror.
#
# The image is labelled with a hash of everything that goes into it (the base's layers, the
# Dockerfile, both package lists, both binaries): an image of the same hash is not built
# again. With BERTH_CACHE_DIR set, it is also kept there (docker save) under that hash, so
# another dockerd on the same machine, such as a test's private one, loads it in seconds
# instead of building it again. Only the newest such file is kept.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
berthd="$build/apps/berthd"
berthctl="$build/apps/berthctl"
for b in "$berthd" "$berthctl"; do
  [[ -x "$b" ]] || { echo "image: $b is missing (build first: scripts/build.sh)" >&2; exit 1; }
done
version=$("$berthd" --version | awk '{ print $2; exit }')
tag="berth/berthd:$version"
base="debian:bookworm-slim"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$root/deploy/image/Dockerfile" "$root/deploy/runtime/packages.txt" "$berthd" "$berthctl" "$stage/"

# lib_packages BINARY...: the Debian packages holding the shared libraries the binaries load.
# ldd prints the paths the loader found; dpkg knows some only by the path their link points
# to, so both are asked, in one dpkg call (each call reads the whole database).
lib_packages() {
  local libs lib path pkg ok=0
  mapfile -t libs < <(ldd "$@" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
                                      $1 ~ /^\// && $1 !~ /:$/ { print $1 }' | sort -u)
  declare -A owner=()
  while IFS= read -r line; do
    pkg=${line%%: *}
    path=${line#*: }
    owner[$path]=${pkg%%:*}
  done < <(for lib in "${libs[@]}"; do echo "$lib"; readlink -f "$lib"; done | sort -u |
             xargs dpkg -S 2>/dev/null || true)
  local found=()
  for lib in "${libs[@]}"; do
    pkg=${owner[$lib]:-${owner[$(readlink -f "$lib")]:-}}
    if [[ -z "$pkg" ]]; then
      echo "image: no Debian package holds $lib (needed by $*)" >&2
      ok=1
    fi
    found+=("$pkg")
  done
  printf '%s\n' "${found[@]}" | sort -u
  return $ok
}
{
  echo "# The packages of berthd's and berthctl's shared libraries (scripts/image.sh, from ldd)."
  lib_packages "$berthd" "$berthctl"
} >"$stage/lib-packages.txt"

# The legacy builder where no buildx is installed (the CLI refuses BuildKit without it).
if ! docker buildx version >/dev/null 2>&1; then
  export DOCKER_BUILDKIT=0
fi

# build_image KEY [--cache-from IMAGE]
build_image() {
  local key="$1"
  shift
  echo "image: docker build of $tag" >&2
  docker build --network host --label "dev.berth.build-key=$key" "$@" -t "$tag" "$stage" >&2
}

if ! docker image inspect "$base" >/dev/null 2>&1; then
  docker pull "$base" >&2 || {
    echo "image: no $base here and none from a registry; without a registry, make it from" \
         "Debian's packages: scripts/debian-base.sh docker-image" >&2
    exit 1
  }
fi
# What goes into the image, hashed: the same key means the same image.
key=$( { docker image inspect -f '{{json .RootFS.Layers}}' "$base"
         cd "$stage" && sha256sum Dockerfile packages.txt lib-packages.txt berthd berthctl; } |
         sha256sum | cut -c1-16)
if [[ -n "${BERTH_CACHE_DIR:-}" ]]; then
  saved="$BERTH_CACHE_DIR/berthd-image-$key.tar"
  mkdir -p "$BERTH_CACHE_DIR"
  exec 9>"$BERTH_CACHE_DIR/image.lock"
  flock 9
fi
if [[ "$(docker image inspect -f '{{index .Config.Labels "dev.berth.build-key"}}' "$tag" 2>/dev/null)" == "$key" ]]; then
  echo "image: $tag is already built from these inputs" >&2
elif [[ -n "${BERTH_CACHE_DIR:-}" && -s "$saved" ]]; then
  echo "image: loading $tag from $saved" >&2
  docker load -i "$saved" >&2
else
  # An earlier image (here, or the newest one kept) seeds docker's layer cache: after a change
  # of berthd alone, only the last COPY is built again, not the minutes of apt before it.
  previous=""
  if [[ -n "${BERTH_CACHE_DIR:-}" ]] && ! docker image inspect "$tag" >/dev/null 2>&1; then
    previous=$(ls -t "$BERTH_CACHE_DIR"/berthd-image-*.tar 2>/dev/null | head -n 1 || true)
    [[ -z "$previous" ]] || docker load -i "$previous" >&2 || true
  fi
  seed=()
  if docker image inspect "$tag" >/dev/null 2>&1; then
    seed=(--cache-from "$tag")
  fi
  build_image "$key" "${seed[@]}"
  if [[ -n "${BERTH_CACHE_DIR:-}" ]]; then
    docker save -o "$saved.tmp.$$" "$tag"
    mv "$saved.tmp.$$" "$saved"
    find "$BERTH_CACHE_DIR" -maxdepth 1 -name 'berthd-image-*.tar' ! -name "${saved##*/}" -delete
    echo "image: saved $tag as $saved" >&2
  fi
fi
echo "$tag"
