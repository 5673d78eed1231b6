#!/usr/bin/env bash
# berthd --version names the commit it was configured from, the same one
# berth_build_info and berthctl status report (core/build_info.cpp). Outside a git
# checkout the revision is "unknown" by design, so there is nothing to check: skip.
set -u
berthd="$1" src="$2"
if ! expected=$(git -C "$src" rev-parse --short HEAD 2>/dev/null); then
  echo "SKIP: $src is not a git checkout, so the build's revision is 'unknown' by design"
  exit 77
fi
out=$("$berthd" --version)
echo "berthd --version: $out (HEAD $expected)"
case "$out" in
  *"(revision unknown)"*) echo "FAIL: a build from a git checkout says revision unknown"; exit 1 ;;
  "berthd "*"(revision "*")") exit 0 ;;
  *) echo "FAIL: unexpected --version output"; exit 1 ;;
esac
