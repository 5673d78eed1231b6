#!/usr/bin/env bash
# Builds the Debian package from the release build tree (docs/packaging.md), checks it with
# lintian, and prints the .deb's path as its last line.
#
#   scripts/package.sh [--no-build] [--no-lintian]
#
# --no-build packages build/ as it is (the test command has just built it).
# Needs help2man (the man pages) and, unless --no-lintian, lintian: scripts/install-deps.sh
# --test installs both.
set -euo pipefail
cd "$(dirname "$0")/.."
build=1
lint=1
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --no-lintian) lint=0 ;;
    *)
      echo "usage: scripts/package.sh [--no-build] [--no-lintian]" >&2
      exit 2
      ;;
  esac
done
if ! command -v help2man >/dev/null; then
  echo "package: help2man is missing (the man pages are made with it): apt-get install help2man" >&2
  exit 1
fi
if ((build)); then
  scripts/build.sh >&2
fi
# Configured again in case build/ was configured before help2man was installed.
cmake --preset release >/dev/null
cmake --build --preset release --target packaging_files >&2
rm -f build/package/berth_*.deb
cpack --config build/CPackConfig.cmake -B build/package >&2
debs=(build/package/berth_*.deb)
if ((${#debs[@]} != 1)) || [[ ! -f "${debs[0]}" ]]; then
  echo "package: cpack made no single build/package/berth_*.deb" >&2
  exit 1
fi
if ((lint)); then
  if ! command -v lintian >/dev/null; then
    echo "package: lintian is missing: apt-get install lintian, or pass --no-lintian" >&2
    exit 1
  fi
  # Errors fail; warnings are printed (docs/packaging.md explains each one kept).
  # lintian says "running with root privileges is not recommended!" as root: dropped.
  lintian --fail-on error "${debs[0]}" 2> >(grep -v 'running with root privileges' >&2) >&2
fi
echo "$PWD/${debs[0]}"
