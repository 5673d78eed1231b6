#!/usr/bin/env bash
# deploy/systemd's units pass `systemd-analyze verify`, and a unit with a misspelt key is
# refused (the check can fail: systemd-analyze only warns about an unknown key, and exits 0,
# so any line it prints fails here).
#
#   usage: systemd_units_test.sh SOURCE_DIR PATH/TO/berthd
#
# The units name /usr/sbin/berthd, where the package installs it; verify needs the
# program to exist, so a copy of the units names the built one instead. The man pages the
# units cite are in the package (deploy.package checks its files), so --man=no here.
# Exit 77 (skipped) without systemd-analyze; under CI=true or BERTH_REQUIRE_ALL=1 that fails.
set -uo pipefail
src="$1"
berthd="$2"
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "SKIPPED: needs systemd-analyze (Debian package systemd): apt-get install systemd"
  if [[ "${CI:-}" == true || "${BERTH_REQUIRE_ALL:-0}" == 1 ]]; then
    exit 1
  fi
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# verify DIR: systemd-analyze verify on DIR's units; prints what it said, fails on any word.
verify() {
  local out
  out=$(systemd-analyze verify --man=no "$1/berthd.socket" "$1/berthd.service" 2>&1)
  local rc=$?
  [[ -n "$out" ]] && printf '%s\n' "$out"
  [[ $rc -eq 0 && -z "$out" ]]
}

mkdir "$tmp/units" "$tmp/broken"
cp "$src/deploy/systemd/berthd.socket" "$src/deploy/systemd/berthd.service" "$tmp/units/"
sed -i "s#^ExecStart=/usr/sbin/berthd #ExecStart=$berthd #" "$tmp/units/berthd.service"
if ! grep -q "^ExecStart=$berthd " "$tmp/units/berthd.service"; then
  echo "FAIL: berthd.service has no ExecStart=/usr/sbin/berthd line to check"
  exit 1
fi
rc=0
if verify "$tmp/units"; then
  echo "PASS: systemd-analyze verify accepts berthd.socket and berthd.service"
else
  echo "FAIL: systemd-analyze verify does not accept the units (above)"
  rc=1
fi
cp "$tmp/units/"* "$tmp/broken/"
sed -i 's/^KillMode=/KillMood=/' "$tmp/broken/berthd.service"
if verify "$tmp/broken" >/dev/null; then
  echo "FAIL: a unit with a misspelt key (KillMood=) passes the check"
  rc=1
else
  echo "PASS: a unit with a misspelt key (KillMood=) is refused"
fi
exit "$rc"
