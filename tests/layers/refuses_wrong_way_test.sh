#!/usr/bin/env bash
# The layer check refuses a wrong-way include: in a copy of the tree, core includes an
# actors header and persistence a protocols header; the check must fail and name each
# file, include and rule. The real tree must pass (that is layers.check).
#
#   refuses_wrong_way_test.sh SOURCE_DIR
set -euo pipefail
src="$1"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The sources the check reads, without tests/, build trees or .git.
tar -C "$src" --exclude=./build --exclude='./build-*' --exclude=./.git --exclude=./tests -cf - . \
  | tar -C "$scratch" -xf -
printf '#include "actors/actors.hpp"\n' >> "$scratch/core/names.cpp"
printf '#include "protocols/http/unix_http_client.hpp"\n' >> "$scratch/persistence/boot_id.cpp"
rc=0
out=$("$src/scripts/check-layers.sh" "$scratch" 2>&1) || rc=$?
echo "$out"
fail=0
if ((rc == 0)); then
  echo "FAIL: the check passed a tree with wrong-way includes"
  fail=1
fi
expect() {
  if ! grep -qF -- "$1" <<<"$out"; then
    echo "FAIL: the check's output lacks: $1"
    fail=1
  fi
}
expect 'core/names.cpp:'
expect '#include "actors/actors.hpp" reaches actors, but core may use only no other module'
expect 'persistence/boot_id.cpp:'
expect '#include "protocols/http/unix_http_client.hpp" reaches http, but persistence may use only backends, core'
expect '2 wrong-way include(s)'
if ((fail)); then
  exit 1
fi
echo "the check refused both wrong-way includes"
