# Shared helpers of berth's end-to-end tests. Source it from a test script:
#
#   source "$(dirname "$0")/lib.sh"
#   e2e_init BERTHD BERTHCTL        # temp dir, cleanup trap, paths
#   start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK"
#   check "Mount returns no Err" "" "$(plugin_err Mount '{"Name":"v","ID":"a"}')"
#   e2e_finish                      # prints "N passed, M failed", exits
#
# Everything a test starts (berthd, dockerd, containers, mounts, temp dirs) is
# torn down by the EXIT trap, also when the test fails half-way.
# Exit status 77 means "skipped" (ctest SKIP_RETURN_CODE).

set -u
# With pipefail, `producer | grep -q` fails at random: grep -q exits at its first match, and a
# producer that writes again gets SIGPIPE (141). Test a pipeline with `grep ... >/dev/null`,
# which reads to the end.
set -o pipefail

E2E_PASSED=0
E2E_FAILED=0
E2E_TMP=""
BERTHD_PID=""
BERTHD_LOG=""
DOCKERD_PID=""
DOCKER_DIR=""
E2E_CLEANUP_HOOKS=()

# -- output --------------------------------------------------------------------

log() {
  echo "[$(date +%H:%M:%S)] $*"
}

# skip REASON...: prints a loud banner and exits 77 (ctest: Skipped). When the run
# requires every test (BERTH_REQUIRE_ALL=1 from scripts/test.sh --require-all, or
# CI=true), a skip is a failure instead: exit 1, naming what was missing.
skip() {
  local required=0
  if [[ "${BERTH_REQUIRE_ALL:-0}" == 1 || "${CI:-}" == true ]]; then
    required=1
  fi
  echo
  echo "############################################################################"
  if ((required)); then
    echo "## FAILED (required, not skipped): $(basename "$0"): $*"
    echo "## --require-all or CI=true: this end-to-end test must run here."
  else
    echo "## SKIPPED: $(basename "$0"): $*"
    echo "## This end-to-end test did NOT run; nothing it covers was verified."
  fi
  echo "############################################################################"
  echo
  if ((required)); then
    exit 1
  fi
  exit 77
}

need_root() {
  if [[ "$(id -u)" != 0 ]]; then
    skip "needs root (it makes mounts and runs daemons); run it as root"
  fi
}

# need_cmd CMD [PACKAGE]: skips when CMD is not installed.
need_cmd() {
  local cmd="$1" pkg="${2:-$1}"
  if ! command -v "$cmd" >/dev/null 2>&1; then
    skip "needs '$cmd' (Debian package $pkg): apt-get install $pkg"
  fi
}

# -- assertions ----------------------------------------------------------------

pass() {
  E2E_PASSED=$((E2E_PASSED + 1))
  echo "PASS: $1"
}

fail() {
  E2E_FAILED=$((E2E_FAILED + 1))
  echo "FAIL: $1"
  shift
  local line
  for line in "$@"; do
    echo "      $line"
  done
}

# check WHAT EXPECTED GOT: passes when GOT equals EXPECTED.
check() {
  if [[ "$3" == "$2" ]]; then
    pass "$1"
  else
    fail "$1" "expected: '$2'" "got:      '$3'"
  fi
}

# check_contains WHAT NEEDLE HAYSTACK: passes when HAYSTACK contains NEEDLE (case-insensitive).
check_contains() {
  if [[ "${3,,}" == *"${2,,}"* ]]; then
    pass "$1"
  else
    fail "$1" "expected to contain: '$2'" "got: '$3'"
  fi
}

# check_nonempty WHAT GOT
check_nonempty() {
  if [[ -n "$2" ]]; then
    pass "$1 ('$2')"
  else
    fail "$1" "expected a non-empty value" "got: ''"
  fi
}

# check_ok WHAT CMD...: passes when CMD succeeds; its output is shown on failure.
# CMD runs in this shell (it may set BERTHD_PID); its output goes through a file.
check_ok() {
  local what="$1" out rc
  shift
  # Not in a subshell: CMD may be a function that starts or stops a daemon.
  "$@" >"$E2E_TMP/.cmd-out" 2>&1
  rc=$?
  out=$(cat "$E2E_TMP/.cmd-out")
  if ((rc == 0)); then
    pass "$what"
  else
    fail "$what" "command: $*" "exit status $rc, output: ${out:0:600}"
  fi
}

# check_fails WHAT CMD...: passes when CMD fails; sets LAST_OUTPUT to its output.
LAST_OUTPUT=""
check_fails() {
  local what="$1" rc
  shift
  "$@" >"$E2E_TMP/.cmd-out" 2>&1
  rc=$?
  LAST_OUTPUT=$(cat "$E2E_TMP/.cmd-out")
  if ((rc != 0)); then
    pass "$what (exit $rc)"
  else
    fail "$what" "command: $*" "expected failure, it succeeded: ${LAST_OUTPUT:0:600}"
  fi
}

# e2e_finish: prints the summary and exits non-zero when anything failed.
e2e_finish() {
  echo
  echo "$E2E_PASSED passed, $E2E_FAILED failed"
  if ((E2E_FAILED > 0)); then
    exit 1
  fi
  exit 0
}

# wait_until TIMEOUT_S CMD...: polls CMD every 0.1 s; false when it never succeeded.
wait_until() {
  local timeout="$1"
  shift
  local deadline=$((SECONDS + timeout))
  while ! "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      return 1
    fi
    sleep 0.1
  done
  return 0
}

# -- set-up and tear-down --------------------------------------------------------

# e2e_init BERTHD BERTHCTL: checks the binaries, makes the temp dir and the trap.
e2e_init() {
  BERTHD="${1:-}"
  BERTHCTL="${2:-}"
  if [[ -z "$BERTHD" || ! -x "$BERTHD" ]]; then
    echo "usage: $0 PATH/TO/berthd PATH/TO/berthctl (berthd '$BERTHD' is not executable)" >&2
    exit 2
  fi
  if [[ -n "$BERTHCTL" && ! -x "$BERTHCTL" ]]; then
    echo "$0: berthctl '$BERTHCTL' is not executable" >&2
    exit 2
  fi
  need_root
  need_cmd curl curl
  need_cmd python3 python3
  need_cmd mount mount
  E2E_TMP=$(mktemp -d /tmp/berth-e2e.XXXXXX)
  chmod 711 "$E2E_TMP"
  STATE="$E2E_TMP/state"
  ADMIN_SOCK="$E2E_TMP/admin.sock"
  BERTHD_LOG="$E2E_TMP/berthd.log"
  # dockerd discovers plugins by socket name: a per-run name never clashes with a real berthd.
  DRIVER="berth-e2e-$$"
  PLUGIN_SOCK="/run/docker/plugins/$DRIVER.sock"
  mkdir -p /run/docker/plugins
  trap e2e_cleanup EXIT
  trap 'echo "interrupted"; exit 130' INT TERM
  log "temp dir $E2E_TMP, driver $DRIVER, berthd $BERTHD"
}

# on_cleanup CMD...: runs CMD (as one string, eval'd) first thing at cleanup.
on_cleanup() {
  E2E_CLEANUP_HOOKS+=("$*")
}

# umount_under DIR: lazily unmounts every mount at or below DIR, deepest first.
umount_under() {
  local dir="$1" m
  [[ -n "$dir" ]] || return 0
  for m in $(awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
}

# detach_block_loops: for on_cleanup, whatever a run left of its block volumes ($BLOCK):
# their mounts (after lib.sh's own unmounts), then their images' loop devices.
detach_block_loops() {
  umount_under "$BLOCK/mounts"
  local dev
  for dev in $(losetup -l -n -O NAME,BACK-FILE 2>/dev/null | awk -v d="$BLOCK/" 'index($2, d) == 1 { print $1 }'); do
    losetup -d "$dev"
  done
}

e2e_cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  local hook
  for hook in "${E2E_CLEANUP_HOOKS[@]+"${E2E_CLEANUP_HOOKS[@]}"}"; do
    eval "$hook" >/dev/null 2>&1
  done
  if [[ -n "$DOCKERD_PID" ]]; then
    stop_dockerd
  fi
  if [[ -n "$BERTHD_PID" ]]; then
    stop_berthd >/dev/null 2>&1 || kill9_berthd
  fi
  if ((rc != 0 && rc != 77)) && [[ -n "$BERTHD_LOG" && -s "$BERTHD_LOG" ]]; then
    echo "---- last lines of berthd's log ($BERTHD_LOG) ----"
    tail -n 40 "$BERTHD_LOG"
    echo "----"
  fi
  rm -f "${PLUGIN_SOCK:-/nonexistent}"
  if [[ -n "$E2E_TMP" && -d "$E2E_TMP" ]]; then
    umount_under "$E2E_TMP"
    if [[ -n "${E2E_KEEP:-}" ]]; then
      echo "E2E_KEEP set: leaving $E2E_TMP"
    else
      rm -rf --one-file-system "$E2E_TMP"
    fi
  fi
  exit "$rc"
}


# The helpers for berthd and for dockerd live beside this file.
source "$(dirname "${BASH_SOURCE[0]}")/lib/berthd.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/dockerd.sh"
