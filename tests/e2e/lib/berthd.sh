# berthd in the end-to-end tests: the plugin protocol by curl, starting and stopping
# berthd, the host mounts it made, and berthctl. Sourced by ../lib.sh.

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

# plugin_timed ENDPOINT BODY: like plugin_err, but sets TIMED_ERR to the Err and TIMED_MS
# to curl's own time for the request, so a bound on berthd's answer does not also count
# the test's JSON parsing (a Python start-up is hundreds of ms on a loaded machine).
plugin_timed() {
  local out seconds
  TIMED_ERR="" TIMED_MS=""
  if ! out=$(curl -sS --max-time 30 --unix-socket "$PLUGIN_SOCK" \
    -H 'Content-Type: application/vnd.docker.plugins.v1+json' \
    -X POST --data-binary "$2" -w '\n%{time_total}' "http://localhost/VolumeDriver.$1" 2>&1); then
    TIMED_ERR="<transport: $out>"
    return 0
  fi
  seconds=${out##*$'\n'}
  out=${out%$'\n'*}
  TIMED_MS=$(awk -v s="$seconds" 'BEGIN { printf "%d", s * 1000 }')
  TIMED_ERR=$(json_get "$out" 'd.get("Err", "") or ""' 2>/dev/null || echo "<not JSON: ${out:0:200}>")
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

# metrics_url: http://ADDR of the running berthd's /metrics (its last "metrics listening on").
metrics_url() {
  echo "http://$(grep -o 'metrics listening on [^ ]*' "$BERTHD_LOG" | tail -n 1 | sed 's/^metrics listening on //')"
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

# crash_during STEP WHAT COMMAND...: berthd restarted with BERTH_TEST_CRASH_AT=STEP, then
# COMMAND, which must kill it there; then berthd started again. Starts take BERTHD_ARGS, and
# each check's name begins with CRASH_LABEL.
crash_during() {
  local step="$1" what="$2"
  shift 2
  kill9_berthd
  if ! BERTH_TEST_CRASH_AT="$step" start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" "${BERTHD_ARGS[@]}"; then
    fail "$CRASH_LABEL berthd starts with BERTH_TEST_CRASH_AT" "see the log above"
    return
  fi
  "$@" >/dev/null 2>&1
  if wait_until 10 eval '! kill -0 "$BERTHD_PID"'; then
    pass "$CRASH_LABEL berthd died at $step during $what"
  else
    fail "$CRASH_LABEL berthd died at $step during $what" "it is still running"
  fi
  wait "$BERTHD_PID" 2>/dev/null
  BERTHD_PID=""
  if start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" "${BERTHD_ARGS[@]}"; then
    pass "$CRASH_LABEL berthd starts again after the crash during $what"
  else
    fail "$CRASH_LABEL berthd starts again after the crash during $what" "see the log above"
  fi
}

# present PATH: "present" or "absent".
present() {
  [[ -e "$1" ]] && echo present || echo absent
}

# data_of NAME: the data directory of a local (directory) volume, what its containers see.
data_of() {
  echo "$STATE/volumes/$1/data"
}

# tree_of DIR [across]: each entry's path, type, owner, group, mode, link count and size, and
# each regular file's checksum: what a copy must keep. With "across" (a copy onto another
# filesystem), a directory's link count and size, which are its filesystem's, are left out,
# and so is lost+found, which mkfs makes.
tree_of() {
  if [[ "${2:-}" == across ]]; then
    (cd "$1" && find . -path ./lost+found -prune -o \( -type d -printf '%p %y %U %G %m\n' \) \
      -o -printf '%p %y %U %G %m %n %s\n' | sort &&
      find . -path ./lost+found -prune -o -type f -exec md5sum {} + | sort -k2)
  else
    (cd "$1" && find . -printf '%p %y %U %G %m %n %s\n' | sort &&
      find . -type f -exec md5sum {} + | sort -k2)
  fi
}

# file_changes FILE: FILE's content changes within 0.2 s (a writer is still writing).
file_changes() {
  local before
  before=$(cat "$1" 2>/dev/null)
  sleep 0.2
  [[ "$(cat "$1" 2>/dev/null)" != "$before" ]]
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

