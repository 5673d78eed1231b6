#!/usr/bin/env bash
# The Debian package (docs/packaging.md): CPack builds it from this build tree; lintian finds
# no error; it holds exactly the expected files; and in a Debian 12 chroot (debootstrap
# minbase, scripts/debian-base.sh) apt installs it with the dependencies it declares, the
# maintainer scripts make the group and enable the socket, an upgrade keeps the state and
# the operator's choice, and remove and purge keep /var/lib/berth.
#
#   usage: package_test.sh SOURCE_DIR BUILD_DIR
#
# Needs root (the chroot), dpkg-deb, lintian, help2man's pages in the build, debootstrap,
# and Debian's mirror for the chroot's apt. Exit 77 (skipped) without them; under CI=true
# or BERTH_REQUIRE_ALL=1 that fails.
set -euo pipefail
src="$1"
build="$2"
cache="${BERTH_CACHE_DIR:-/var/cache/berth-build}"

skip() {
  echo "SKIPPED: $*"
  if [[ "${CI:-}" == true || "${BERTH_REQUIRE_ALL:-0}" == 1 ]]; then
    echo "FAILED (required, not skipped): CI=true or BERTH_REQUIRE_ALL=1"
    exit 1
  fi
  exit 77
}
# stage NAME: prints NAME with the seconds since the test started (docs/testing.md, "Budget").
stage() {
  echo "== [${SECONDS}s] $*"
}
fail() {
  echo "FAIL: $*"
  exit 1
}
for tool in dpkg-deb lintian debootstrap systemctl; do
  command -v "$tool" >/dev/null || skip "needs $tool: scripts/install-deps.sh --test installs it"
done
[[ $(id -u) == 0 ]] || skip "needs root for the chroot"
[[ -f "$build/packaging/berthd.8.gz" ]] \
  || skip "the build made no man pages: needs help2man (apt-get install help2man, then configure again)"

tmp=$(mktemp -d)
root="$tmp/root"
cleanup() {
  # The chroot's bind mounts first, so rm never walks into the host's /proc or apt cache.
  local m
  for m in "$root/var/cache/apt/archives" "$root/var/lib/apt/lists" "$root/proc"; do
    mountpoint -q "$m" 2>/dev/null && umount -l "$m"
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

stage "build the package"
cpack --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1 \
  || { cat "$tmp/cpack.log"; fail "cpack failed"; }
debs=("$tmp"/out/berth_*_amd64.deb)
deb=${debs[0]}
[[ -f "$deb" ]] || fail "cpack made no berth_*_amd64.deb"
version=$(dpkg-deb --field "$deb" Version)
echo "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"

stage "lintian"
# Warnings are printed, errors fail (docs/packaging.md says why each warning kept is).
lint_rc=0
lintian --fail-on error "$deb" >"$tmp/lintian.out" 2>&1 || lint_rc=$?
grep -v 'running with root privileges' "$tmp/lintian.out" || true
((lint_rc == 0)) || fail "lintian reports errors (exit $lint_rc)"

stage "contents"
expected="./lib/systemd/system/berthd.service
./lib/systemd/system/berthd.socket
./usr/bin/berthctl
./usr/sbin/berthd
./usr/share/doc/berth/changelog.gz
./usr/share/doc/berth/copyright
./usr/share/doc/berth/running.md
./usr/share/man/man8/berthctl.8.gz
./usr/share/man/man8/berthd.8.gz"
actual=$(dpkg-deb --contents "$deb" | awk '$1 !~ /^d/ { print $6 }' | sort)
if [[ "$actual" != "$expected" ]]; then
  diff <(echo "$expected") <(echo "$actual") || true
  fail "the package's files are not the expected ones (< expected, > in the package)"
fi
dpkg-deb --contents "$deb" | awk '$6 ~ /bin\/berth/ && $1 != "-rwxr-xr-x" { bad = 1 } END { exit bad }' \
  || fail "berthd and berthctl must be 0755"
# Depends, one package name a line, without versions.
depends=$(dpkg-deb --field "$deb" Depends | tr ',' '\n' | sed 's/^ *//; s/[ (].*//')
for need in mount xfsprogs e2fsprogs adduser init-system-helpers libcaf-core0.17 libgrpc++1.51 \
            libjemalloc2; do
  grep -qxF "$need" <<<"$depends" || fail "Depends lacks $need: $(dpkg-deb --field "$deb" Depends)"
done
[[ $(dpkg-deb --field "$deb" Recommends) == *nfs-common* ]] || fail "Recommends lacks nfs-common"
# The man pages come from the programs' own --help: a flag of berthd's must be in its page.
zcat "$build/packaging/berthd.8.gz" | grep -- 'compact\\-after\\-mb' >/dev/null \
  || fail "berthd(8) does not show --compact-after-mb from berthd --help"

stage "install into a Debian 12 chroot"
tarball=$("$src/scripts/debian-base.sh" tarball | tail -n 1)
[[ -f "$tarball" ]] || fail "scripts/debian-base.sh gave no tarball"
mkdir "$root"
tar -xf "$tarball" -C "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
# The downloaded .debs and package lists are kept between runs, so only the first run
# fetches them all; later ones ask the mirror only what changed.
mkdir -p "$cache/apt-archives/partial" "$cache/apt-lists/partial"
mount --bind "$cache/apt-archives" "$root/var/cache/apt/archives"
mount --bind "$cache/apt-lists" "$root/var/lib/apt/lists"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
cp "$deb" "$root/tmp/berth.deb"
in_root apt-get -qq update
in_root apt-get -y -qq -o Dpkg::Use-Pty=0 install /tmp/berth.deb >"$tmp/install.log" 2>&1 \
  || { tail -n 30 "$tmp/install.log"; fail "apt-get install of the package failed"; }
in_root berthd --version | grep -q "^berthd $version" || fail "the installed berthd does not run"
in_root berthctl --version | grep -q "^berthctl $version" || fail "the installed berthctl does not run"
in_root getent group berth >/dev/null || fail "postinst made no group berth"
[[ $(readlink "$root/etc/systemd/system/sockets.target.wants/berthd.socket") == /lib/systemd/system/berthd.socket ]] \
  || fail "postinst did not enable berthd.socket"
[[ $(stat -c %a "$root/var/lib/berth") == 700 ]] || fail "/var/lib/berth is not 0700"

stage "upgrade keeps the state and the operator's choice"
echo "a volume's data" >"$root/var/lib/berth/data-marker"
# The operator turned the socket off: an upgrade must not turn it on again. (systemctl
# --root edits the chroot's unit links offline, as on a host where systemd is not running.)
systemctl --root="$root" --quiet disable berthd.socket
next="$tmp/next"
dpkg-deb -R "$deb" "$next"
sed -i "s/^Version: .*/Version: $version+next1/" "$next/DEBIAN/control"
dpkg-deb --root-owner-group -b "$next" "$root/tmp/berth-next.deb" >/dev/null
in_root dpkg -i /tmp/berth-next.deb >"$tmp/upgrade.log" 2>&1 \
  || { cat "$tmp/upgrade.log"; fail "the upgrade failed"; }
[[ $(in_root dpkg-query -W -f='${Version}' berth) == "$version+next1" ]] || fail "not upgraded"
[[ -f "$root/var/lib/berth/data-marker" ]] || fail "the upgrade lost /var/lib/berth"
[[ ! -e "$root/etc/systemd/system/sockets.target.wants/berthd.socket" ]] \
  || fail "the upgrade enabled the socket the operator had disabled"
systemctl --root="$root" --quiet enable berthd.socket

stage "remove keeps the state"
in_root apt-get -y -qq remove berth >"$tmp/remove.log" 2>&1 || { cat "$tmp/remove.log"; fail "remove failed"; }
[[ ! -e "$root/usr/sbin/berthd" ]] || fail "remove left /usr/sbin/berthd"
[[ -f "$root/var/lib/berth/data-marker" ]] || fail "remove deleted /var/lib/berth"

stage "purge keeps the state, and says so"
in_root dpkg --purge berth >"$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log"; fail "purge failed"; }
cat "$tmp/purge.log"
[[ -f "$root/var/lib/berth/data-marker" ]] || fail "purge deleted /var/lib/berth"
grep -q "kept /var/lib/berth" "$tmp/purge.log" || fail "purge did not say that it kept /var/lib/berth"
[[ ! -e "$root/etc/systemd/system/sockets.target.wants/berthd.socket" ]] \
  || fail "purge left the socket enabled"
echo "PASS: package $(basename "$deb") (${SECONDS}s)"
