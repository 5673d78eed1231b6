# shellcheck shell=bash
# Helpers of the tests that kill and restart a private dockerd under berthd (docs/design.md,
# "Mount IDs dockerd forgot").
# Source it after lib.sh:
#
#   source "$(dirname "$0")/lib.sh"
#   source "$(dirname "$0")/dockerd_lib.sh"
#   e2e_init BERTHD BERTHCTL
#   dockerd_first_start            # skips loudly when dockerd cannot run here
#   dockerd_kill9; dockerd_start --live-restore
#
# dockerd keeps its data root across restarts ($DOCKER_DIR, as lib.sh's start_dockerd
# lays it out), so containers, volumes and restart policies survive a SIGKILL. lib.sh's
# cleanup stops the last dockerd; a hook here also ends the containerd and the shims a
# killed dockerd left behind (found by this run's own paths, never by name).

# dockerd_start [DOCKERD ARGS...]: starts dockerd on $DOCKER_DIR (same data root as before)
# with the fixed private options plus ARGS, waits (60 s) until it answers. Sets DOCKERD_PID.
# Returns 1 (and prints its log's tail) when it does not come up.
dockerd_start() {
  if [[ -z "$DOCKER_DIR" ]]; then
    DOCKER_DIR="$E2E_TMP/d"
    on_cleanup dockerd_reap_leftovers
  fi
  mkdir -p "$DOCKER_DIR/data" "$DOCKER_DIR/exec"
  [[ -f "$DOCKER_DIR/daemon.json" ]] || echo '{}' >"$DOCKER_DIR/daemon.json"
  export DOCKER_HOST="unix://$DOCKER_DIR/docker.sock"
  echo "==== $(date +%H:%M:%S) dockerd $*" >>"$DOCKER_DIR/dockerd.log"
  dockerd --config-file "$DOCKER_DIR/daemon.json" \
    --data-root "$DOCKER_DIR/data" --exec-root "$DOCKER_DIR/exec" \
    -H "$DOCKER_HOST" --pidfile "$DOCKER_DIR/docker.pid" \
    --iptables=false --ip-masq=false --bridge=none --storage-driver=vfs --ip-forward=false \
    --userland-proxy=false "$@" >>"$DOCKER_DIR/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  local deadline=$((SECONDS + 60))
  while ! "$DOCKER_CLI" info >/dev/null 2>&1; do
    if ! kill -0 "$DOCKERD_PID" 2>/dev/null || ((SECONDS >= deadline)); then
      echo "dockerd did not come up; last lines of its log:" >&2
      tail -n 30 "$DOCKER_DIR/dockerd.log" >&2
      return 1
    fi
    sleep 0.2
  done
  log "dockerd up (pid $DOCKERD_PID${*:+, $*})"
  return 0
}

# dockerd_first_start [ARGS...]: dockerd_start, skipping (loudly) when dockerd cannot start.
dockerd_first_start() {
  need_cmd dockerd docker.io
  need_cmd containerd containerd
  need_cmd runc runc
  if ! dockerd_start "$@"; then
    skip "dockerd cannot start on this machine (see its log above)"
  fi
}

# dockerd_kill9: SIGKILL dockerd, as the OOM killer or a crash would. The containers'
# shims live on. The containerd this dockerd started follows it out within a second or
# so; a dockerd started before it is gone finds it "still running", cannot connect and
# exits ("timeout waiting for containerd to start"), so wait (15 s) for it to go, as a
# supervisor's restart delay would (systemd's docker.service: RestartSec=2).
dockerd_kill9() {
  [[ -n "$DOCKERD_PID" ]] || return 0
  local containerd_pid=""
  if [[ -f "$DOCKER_DIR/exec/containerd/containerd.pid" ]]; then
    containerd_pid=$(cat "$DOCKER_DIR/exec/containerd/containerd.pid" 2>/dev/null)
  fi
  log "SIGKILL dockerd (pid $DOCKERD_PID)"
  kill -KILL "$DOCKERD_PID" 2>/dev/null
  wait "$DOCKERD_PID" 2>/dev/null
  DOCKERD_PID=""
  if [[ -n "$containerd_pid" ]] && ! wait_until 15 bash -c "! kill -0 $containerd_pid"; then
    echo "its containerd (pid $containerd_pid) still runs 15 s after dockerd's SIGKILL" >&2
  fi
  return 0
}

# dockerd_reap_leftovers: the containerd and shims of this run that outlived dockerd (a
# test that failed between a SIGKILL and the restart); matched by this run's exec root.
# Cleanup hooks run before lib.sh stops a running dockerd: that one stops its own.
dockerd_reap_leftovers() {
  [[ -n "$DOCKER_DIR" && -z "$DOCKERD_PID" ]] || return 0
  local dir pid cmd
  for dir in /proc/[0-9]*; do
    pid=${dir#/proc/}
    cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
    if [[ "$cmd" == *"$DOCKER_DIR/exec/"* && ( "$cmd" == containerd* || "$cmd" == */containerd* ) ]]; then
      kill -KILL "$pid" 2>/dev/null
    fi
  done
}

# container_state NAME: running, exited, ... ("absent" when dockerd does not know it).
container_state() {
  "$DOCKER_CLI" inspect -f '{{.State.Status}}' "$1" 2>/dev/null || echo absent
}

container_is() {
  [[ "$(container_state "$1")" == "$2" ]]
}

# container_started_at NAME: State.StartedAt (changes at each start).
container_started_at() {
  "$DOCKER_CLI" inspect -f '{{.State.StartedAt}}' "$1" 2>/dev/null
}

# container_pid NAME: State.Pid (0 when not running).
container_pid() {
  "$DOCKER_CLI" inspect -f '{{.State.Pid}}' "$1" 2>/dev/null
}

# -- berthd with the Docker Engine API ------------------------------------------------

# berthd_has_docker_api: true when this berthd knows --docker-api (built with the dockerd
# reconciliation).
berthd_has_docker_api() {
  "$BERTHD" --help 2>&1 | grep -- '--docker-api' >/dev/null
}

# start_berthd_api API_URL [EXTRA ARGS...]: start_berthd with `--docker-api API_URL` and
# `--die-grace-ms $DIE_GRACE_MS`. Through lib.sh's DOCKER_API_ARGS when it has them,
# else as extra arguments. A berthd without the options starts without them (the test
# then fails on what the feature should have done, not on an unknown option).
start_berthd_api() {
  local api="$1"
  shift
  local feature=()
  if berthd_has_docker_api; then
    feature=(--die-grace-ms "$DIE_GRACE_MS")
    if declare -p DOCKER_API_ARGS >/dev/null 2>&1; then
      DOCKER_API_ARGS=(--docker-api "$api")
    else
      feature+=(--docker-api "$api")
    fi
  fi
  start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" "${feature[@]+"${feature[@]}"}" "$@"
}

# log_mark: the number of lines berthd's log has now (for log_since).
log_mark() {
  wc -l <"$BERTHD_LOG"
}

# log_since MARK: berthd's log after line MARK.
log_since() {
  tail -n +"$(($1 + 1))" "$BERTHD_LOG"
}

# released_lines VOLUME [MARK]: the lines where berthd released a mount ID of VOLUME.
released_lines() {
  log_since "${2:-0}" | grep -E "volume $1 released mount ID" || true
}

has_released() {
  [[ -n "$(released_lines "$1" "${2:-0}")" ]]
}

# release_reason LINE: the reason in a release log line ("" when none).
release_reason_of() {
  sed -n 's/.*(reason \([a-z_]*\),.*/\1/p' <<<"$1" | head -1
}

# metric NAME: the value of an unlabelled sample NAME on /metrics ("" when absent).
metric() {
  curl -s --max-time 5 "$(metrics_url)/metrics" | awk -v n="$1" '$1 == n { print $2 }' | head -1
}

metric_is() {
  [[ "$(metric "$1")" == "$2" ]]
}

# ctl_release NAME ID [--json]: berthctl release; output and status are berthctl's.
ctl_release() {
  "$BERTHCTL" --socket "$ADMIN_SOCK" release "$@" 2>&1
}

# ctl_only_id NAME: the one mount ID berthd counts for NAME ("" unless exactly one).
ctl_only_id() {
  local m
  m=$(ctl_mounts "$1")
  if [[ "$m" != *" "* && "$m" == *=* ]]; then
    echo "${m%%=*}"
  fi
}

# slow_tar FILE SECONDS: writes to stdout a tar of one file FILE (SECONDS * 4 lines of
# data) that takes SECONDS to arrive: a `docker cp -` whose mount lasts that long.
slow_tar() {
  python3 - "$1" "$2" <<'PY'
import io, sys, tarfile, time
name, secs = sys.argv[1], float(sys.argv[2])
steps = max(1, int(secs * 4))
line = b"x" * 63 + b"\n"
info = tarfile.TarInfo(name)
info.size = steps * len(line)
info.mode = 0o644
info.mtime = int(time.time())
out = sys.stdout.buffer
out.write(info.tobuf(format=tarfile.USTAR_FORMAT))
out.flush()
for _ in range(steps):
    time.sleep(secs / steps)
    out.write(line)
    out.flush()
out.write(b"\0" * ((512 - info.size % 512) % 512) + b"\0" * 1024)
out.flush()
PY
}
