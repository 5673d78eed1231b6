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

# -- berthd ----------------------------------------------------------------------

# plugin_post SOCK ENDPOINT BODY: POSTs to the Docker plugin socket, prints the body.
plugin_post() {
  curl -sS --max-time 30 --unix-socket "$1" \
    -H 'Content-Type: application/vnd.docker.plugins.v1+json' \
    -X POST --data-binary "$3" "http://localhost/$2"
}

# plugin ENDPOINT BODY: VolumeDriver.ENDPOINT on $PLUGIN_SOCK; prints the reply body.
plugin() {
  plugin_post "$PLUGIN_SOCK" "VolumeDriver.$1" "$2"
}

# plugin_err ENDPOINT BODY: prints the reply's Err ("" on success; "<transport: ...>" on no reply).
plugin_err() {
  local out
  if ! out=$(plugin "$1" "$2" 2>&1); then
    echo "<transport: $out>"
    return 0
  fi
  json_get "$out" 'd.get("Err", "") or ""' 2>/dev/null || echo "<not JSON: ${out:0:200}>"
}

# mount_id NAME ID / unmount_id NAME ID: Mount or Unmount with a mount ID; prints the Err.
mount_id() {
  plugin_err Mount "{\"Name\":\"$1\",\"ID\":\"$2\"}"
}

unmount_id() {
  plugin_err Unmount "{\"Name\":\"$1\",\"ID\":\"$2\"}"
}

# create_vol NAME [OPTS_JSON]: Create; prints the Err.
create_vol() {
  local opts="${2:-}"
  [[ -n "$opts" ]] || opts='{}'
  plugin_err Create "{\"Name\":\"$1\",\"Opts\":$opts}"
}

# listed: the names in VolumeDriver.List, sorted, space-separated.
listed() {
  local out
  out=$(plugin List '{}' 2>&1) || {
    echo "<transport: $out>"
    return 0
  }
  json_get "$out" '" ".join(sorted(v["Name"] for v in (d.get("Volumes") or [])))' 2>/dev/null ||
    echo "<not JSON: ${out:0:200}>"
}

# json_get JSON EXPR: evaluates the Python expression EXPR with `d` = parsed JSON.
json_get() {
  python3 -c '
import json, sys
d = json.loads(sys.argv[1])
r = eval(sys.argv[2])
if isinstance(r, bool):
    print("true" if r else "false")
elif isinstance(r, (dict, list)):
    print(json.dumps(r, sort_keys=True))
elif r is None:
    print("")
else:
    print(r)
' "$1" "$2"
}

# berthd_answers SOCK: true when Plugin.Activate answers on SOCK.
berthd_answers() {
  local out
  out=$(curl -s --max-time 2 --unix-socket "$1" -X POST -d '{}' http://localhost/Plugin.Activate 2>/dev/null) || return 1
  [[ "$out" == *Implements* ]]
}

# Every berthd a test starts serves metrics on a free port, never the fixed default
# (127.0.0.1:9808): tests run in parallel. A later --metrics-address in EXTRA ARGS wins.
METRICS_ARGS=(--metrics-address 127.0.0.1:0)

# The dockerd reconciliation (docs/design.md, "Mount IDs dockerd forgot") is off unless a
# test asks for it: berthd's default (--docker-api unix:///var/run/docker.sock) would reach
# the host's dockerd. use_docker_api
# makes start_dockerd point it at the private dockerd. A later --docker-api in EXTRA ARGS wins.
DOCKER_API_ARGS=(--docker-api "")
WANT_DOCKER_API=""

# use_docker_api: berthd started after start_dockerd reconciles with the private dockerd.
use_docker_api() {
  WANT_DOCKER_API=1
  if [[ -n "${DOCKER_DIR:-}" && -n "${DOCKERD_PID:-}" ]]; then
    DOCKER_API_ARGS=(--docker-api "unix://$DOCKER_DIR/docker.sock")
  fi
}

# start_berthd STATEDIR SOCK ADMIN [EXTRA ARGS...]: starts berthd (with METRICS_ARGS and
# DOCKER_API_ARGS) in the background and
# waits (30 s) until the plugin socket answers. Sets BERTHD_PID. Returns 1 when it does not come up.
start_berthd() {
  local state="$1" sock="$2" admin="$3"
  shift 3
  echo "==== $(date +%H:%M:%S) start: $BERTHD --state-dir $state --docker-socket $sock --admin-socket $admin ${METRICS_ARGS[*]} ${DOCKER_API_ARGS[*]} $*" >>"$BERTHD_LOG"
  "$BERTHD" --state-dir "$state" --docker-socket "$sock" --admin-socket "$admin" \
    "${METRICS_ARGS[@]}" "${DOCKER_API_ARGS[@]}" "$@" >>"$BERTHD_LOG" 2>&1 &
  BERTHD_PID=$!
  local deadline=$((SECONDS + 30))
  while ! berthd_answers "$sock"; do
    if ! kill -0 "$BERTHD_PID" 2>/dev/null; then
      wait "$BERTHD_PID" 2>/dev/null
      echo "berthd exited during start (status $?); last log lines:" >&2
      tail -n 20 "$BERTHD_LOG" >&2
      BERTHD_PID=""
      return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "berthd did not answer on $sock within 30 s; last log lines:" >&2
      tail -n 20 "$BERTHD_LOG" >&2
      return 1
    fi
    sleep 0.05
  done
  return 0
}

# stop_berthd: SIGTERM and wait; returns 1 (and kills -9) when it does not exit within
# BERTH_E2E_STOP_S seconds (default 20: nothing is in flight, a graceful stop is prompt).
stop_berthd() {
  [[ -n "$BERTHD_PID" ]] || return 0
  kill -TERM "$BERTHD_PID" 2>/dev/null
  local limit="${BERTH_E2E_STOP_S:-20}"
  local deadline=$((SECONDS + limit))
  while kill -0 "$BERTHD_PID" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      echo "berthd (pid $BERTHD_PID) did not exit within $limit s of SIGTERM; killing it" >&2
      kill9_berthd
      return 1
    fi
    sleep 0.05
  done
  wait "$BERTHD_PID" 2>/dev/null
  local rc=$?
  BERTHD_PID=""
  if ((rc != 0)); then
    echo "berthd exited with status $rc after SIGTERM" >&2
    return 1
  fi
  return 0
}

# kill9_berthd: SIGKILL and reap.
kill9_berthd() {
  [[ -n "$BERTHD_PID" ]] || return 0
  kill -KILL "$BERTHD_PID" 2>/dev/null
  wait "$BERTHD_PID" 2>/dev/null
  BERTHD_PID=""
  return 0
}

# restart_berthd [EXTRA ARGS]: stop_berthd then start_berthd with the usual paths.
# Starts berthd even when the stop failed (then returns 1), so later cases still run.
restart_berthd() {
  local rc=0
  stop_berthd || rc=1
  start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" "$@" || return 1
  return "$rc"
}

# -- host mount state --------------------------------------------------------------

# mount_count PATH: how many entries of /proc/self/mountinfo have PATH as mount point.
mount_count() {
  awk -v p="$1" '$5 == p { n++ } END { print n + 0 }' /proc/self/mountinfo
}

is_mounted() {
  [[ "$(mount_count "$1")" -gt 0 ]]
}

is_unmounted() {
  [[ "$(mount_count "$1")" -eq 0 ]]
}

# mount_fstype PATH: the filesystem type of the topmost mount at PATH ("" when none).
mount_fstype() {
  awk -v p="$1" '$5 == p { for (i = 7; i <= NF; i++) if ($i == "-") { t = $(i + 1); break } } END { print t }' /proc/self/mountinfo
}

# vol_mnt NAME: the host mount point of a local volume.
vol_mnt() {
  echo "$STATE/volumes/$1/mnt"
}

# check_mounted WHAT NAME: the volume's mount point is mounted (waits up to 10 s).
check_mounted() {
  if wait_until 10 is_mounted "$(vol_mnt "$2")"; then
    pass "$1: $2 mounted on the host"
  else
    fail "$1: $2 mounted on the host" "expected a mountinfo entry for $(vol_mnt "$2")" "got none"
  fi
}

# check_unmounted WHAT NAME: the volume's mount point is not mounted (waits up to 10 s).
check_unmounted() {
  if wait_until 10 is_unmounted "$(vol_mnt "$2")"; then
    pass "$1: $2 not mounted on the host"
  else
    fail "$1: $2 not mounted on the host" "expected no mountinfo entry for $(vol_mnt "$2")" \
      "got: $(grep -F " $(vol_mnt "$2") " /proc/self/mountinfo | head -3)"
  fi
}

# -- berthctl ------------------------------------------------------------------------

# ctl_json NAME: `berthctl inspect NAME --json`.
ctl_json() {
  "$BERTHCTL" --socket "$ADMIN_SOCK" inspect "$1" --json 2>&1
}

# ctl_field NAME KEY: the first value of KEY found anywhere in the inspect JSON.
# Mount maps print as sorted "ID=N" words; booleans as true/false.
ctl_field() {
  local out
  out=$(ctl_json "$1") || {
    echo "<berthctl failed: ${out:0:200}>"
    return 0
  }
  python3 -c '
import json, sys
try:
    d = json.loads(sys.argv[1])
except Exception:
    print("<not JSON: %s>" % sys.argv[1][:200]); sys.exit(0)
def find(x, k):
    if isinstance(x, dict):
        if k in x:
            return x[k], True
        for v in x.values():
            r, ok = find(v, k)
            if ok:
                return r, True
    elif isinstance(x, list):
        for v in x:
            r, ok = find(v, k)
            if ok:
                return r, True
    return None, False
r, ok = find(d, sys.argv[2])
if not ok:
    print("<no %s>" % sys.argv[2])
elif isinstance(r, bool):
    print("true" if r else "false")
elif isinstance(r, dict):
    print(" ".join("%s=%s" % (k, 1 if v is None else v) for k, v in sorted(r.items())))
else:
    print(r)
' "$out" "$2"
}

# ctl_mounts NAME: "ID=N ..." from berthctl; ctl_mounted NAME: true/false.
ctl_mounts() {
  ctl_field "$1" mounts
}

ctl_mounted() {
  ctl_field "$1" mounted
}

# ctl_total NAME: sum of the mount-ID counts.
ctl_total() {
  local m n=0 w
  m=$(ctl_mounts "$1")
  if [[ "$m" == "<"* ]]; then
    echo "$m"
    return 0
  fi
  for w in $m; do
    n=$((n + ${w##*=}))
  done
  echo "$n"
}

# -- dockerd ------------------------------------------------------------------------

# docker CLI matching Debian's dockerd when present.
DOCKER_CLI=docker
if [[ -x /usr/bin/docker ]]; then
  DOCKER_CLI=/usr/bin/docker
fi

dk() {
  timeout 120 "$DOCKER_CLI" "$@"
}

# start_dockerd: a private dockerd (own data/exec root, socket, pidfile, no networking).
# Skips (exit 77) loudly when it cannot start. Sets DOCKER_HOST for dk.
start_dockerd() {
  need_cmd dockerd docker.io
  need_cmd containerd containerd
  need_cmd runc runc
  DOCKER_DIR="$E2E_TMP/d"
  mkdir -p "$DOCKER_DIR/data" "$DOCKER_DIR/exec"
  echo '{}' >"$DOCKER_DIR/daemon.json"
  export DOCKER_HOST="unix://$DOCKER_DIR/docker.sock"
  log "starting dockerd (log $DOCKER_DIR/dockerd.log)"
  dockerd --config-file "$DOCKER_DIR/daemon.json" \
    --data-root "$DOCKER_DIR/data" --exec-root "$DOCKER_DIR/exec" \
    -H "$DOCKER_HOST" --pidfile "$DOCKER_DIR/docker.pid" \
    --iptables=false --ip-masq=false --bridge=none --storage-driver=vfs --ip-forward=false \
    --userland-proxy=false >"$DOCKER_DIR/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  local deadline=$((SECONDS + 60))
  while ! "$DOCKER_CLI" info >/dev/null 2>&1; do
    if ! kill -0 "$DOCKERD_PID" 2>/dev/null || ((SECONDS >= deadline)); then
      echo "dockerd did not come up; last lines of its log:"
      tail -n 30 "$DOCKER_DIR/dockerd.log"
      skip "dockerd cannot start on this machine (see its log above)"
    fi
    sleep 0.5
  done
  log "dockerd up (pid $DOCKERD_PID, $("$DOCKER_CLI" version --format 'server {{.Server.Version}}' 2>/dev/null))"
  if [[ -n "$WANT_DOCKER_API" ]]; then
    DOCKER_API_ARGS=(--docker-api "$DOCKER_HOST")
  fi
}

# term_dockerd: SIGTERM dockerd and wait for it (30 s, then SIGKILL). Its containers are left
# as its options say (with --live-restore they keep running).
term_dockerd() {
  [[ -n "$DOCKERD_PID" ]] || return 0
  kill -TERM "$DOCKERD_PID" 2>/dev/null
  local deadline=$((SECONDS + 30))
  while kill -0 "$DOCKERD_PID" 2>/dev/null && ((SECONDS < deadline)); do
    sleep 0.2
  done
  kill -KILL "$DOCKERD_PID" 2>/dev/null
  wait "$DOCKERD_PID" 2>/dev/null
  DOCKERD_PID=""
}

# stop_dockerd: removes every container, stops dockerd and its containerd.
stop_dockerd() {
  [[ -n "$DOCKERD_PID" ]] || return 0
  local ids
  ids=$(timeout 30 "$DOCKER_CLI" ps -aq 2>/dev/null)
  if [[ -n "$ids" ]]; then
    # shellcheck disable=SC2086
    timeout 60 "$DOCKER_CLI" rm -f $ids >/dev/null 2>&1
  fi
  local containerd_pid=""
  if [[ -f "$DOCKER_DIR/exec/containerd/containerd.pid" ]]; then
    containerd_pid=$(cat "$DOCKER_DIR/exec/containerd/containerd.pid" 2>/dev/null)
  fi
  term_dockerd
  if [[ -n "$containerd_pid" ]] && kill -0 "$containerd_pid" 2>/dev/null; then
    kill -TERM "$containerd_pid" 2>/dev/null
    sleep 1
    kill -KILL "$containerd_pid" 2>/dev/null
  fi
}

# make_busybox_image TAG: imports a one-binary image (busybox-static) offline.
make_busybox_image() {
  local tag="$1" root="$E2E_TMP/image" bb="" app
  for bb in /bin/busybox /usr/bin/busybox ""; do
    [[ -n "$bb" && -x "$bb" ]] && break
  done
  if [[ -z "$bb" ]]; then
    skip "needs busybox (Debian package busybox-static): apt-get install busybox-static"
  fi
  if ! file_is_static "$bb"; then
    skip "$bb is not statically linked; install busybox-static"
  fi
  mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/proc" "$root/sys" "$root/dev" "$root/data"
  cp "$bb" "$root/bin/busybox"
  for app in sh ash cat echo ls sleep mount grep test true false rm mkdir cp mv touch df stat \
    wc head tail env id ps find sync du sed awk tr printf kill hostname md5sum; do
    ln -s busybox "$root/bin/$app"
  done
  echo 'root:x:0:0:root:/:/bin/sh' >"$root/etc/passwd"
  echo 'root:x:0:' >"$root/etc/group"
  tar -C "$root" -cf "$E2E_TMP/image.tar" . || return 1
  dk import -c 'ENV PATH=/bin' "$E2E_TMP/image.tar" "$tag" >/dev/null
}

# file_is_static PATH: true for a statically linked ELF.
file_is_static() {
  ! LC_ALL=C ldd "$1" >/dev/null 2>&1
}
