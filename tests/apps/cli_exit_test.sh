#!/usr/bin/env bash
# The programs' command lines as a shell sees them: --help and --version print to
# standard output and exit 0 (help2man reads them); an unknown option or a bad value
# exits 2 with a message on standard error that names the option and the value.
#   cli_exit_test.sh BERTHD BERTHCTL BERTH_BENCH
set -u
berthd="$1" berthctl="$2" bench="$3"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 passes=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# ok CMD...: exit 0, something on stdout, nothing on stderr.
ok() {
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" != 0 ] || [ ! -s "$tmp/out" ] || [ -s "$tmp/err" ]; then
    fail "$* exited $rc (stdout $(wc -c <"$tmp/out") bytes, stderr: $(cat "$tmp/err"))"
  else
    passes=$((passes + 1))
  fi
}

# usage WORD... -- CMD...: exit 2, stderr names every WORD, nothing on stdout.
usage() {
  local words=()
  while [ "$1" != "--" ]; do words+=("$1"); shift; done
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" != 2 ] || [ -s "$tmp/out" ]; then
    fail "$* exited $rc, want 2 (stderr: $(head -1 "$tmp/err"))"
    return
  fi
  for w in "${words[@]}"; do
    if ! grep -qF -- "$w" "$tmp/err"; then
      fail "$*: stderr does not name $w: $(head -1 "$tmp/err")"
      return
    fi
  done
  passes=$((passes + 1))
}

for p in "$berthd" "$berthd prestop" "$berthctl" "$bench" "$bench csi-burst"; do
  # shellcheck disable=SC2086
  ok $p --help
done
ok "$berthd" --version
ok "$berthctl" --version
ok "$bench" --version

usage --bogus -- "$berthd" --bogus
usage --log-level loud -- "$berthd" --log-level loud
usage --die-grace-ms 300001 -- "$berthd" --die-grace-ms=300001
usage --compact-after-mb 0 -- "$berthd" --compact-after-mb 0
usage --state-dir -- "$berthd" --state-dir
usage --bogus -- "$berthd" prestop --node-name n1 --bogus
usage --deadline-s 0 -- "$berthd" prestop --node-name n1 --deadline-s 0
usage --color -- "$berthctl" volumes --color
usage --interval 0 -- "$berthctl" top --interval 0
usage --socket -- "$berthctl" --socket= status
usage 1GB -- "$berthctl" resize v1 1GB
usage --bogus -- "$bench" docker --bogus 1
usage --volumes 0 -- "$bench" docker --socket /s --volumes 0
usage --clients 0 -- "$bench" csi-burst --endpoint /s --clients 0
usage --seconds x -- "$bench" csi --endpoint /s --concurrency 1 --seconds x
usage fly -- "$bench" fly
usage "--help takes no value" -- "$berthd" --help=1
usage "--json takes no value" -- "$berthctl" status --json=yes
usage "--keep takes no value" -- "$bench" restart --keep=no

echo "$passes passed, $failures failed"
[ "$failures" = 0 ]
