# A private dockerd for the end-to-end tests (vfs, no networking) and the busybox
# image they run. Sourced by ../lib.sh.

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

# start_dockerd_and_berthd [BERTHD ARGS...]: a real dockerd with the busybox image IMG, then
# berthd on this run's sockets; skips when the image cannot be made, and ends the run when
# berthd does not start.
start_dockerd_and_berthd() {
  start_dockerd
  IMG="berth-e2e-busybox:latest"
  if ! make_busybox_image "$IMG"; then
    skip "could not import the busybox image into dockerd"
  fi
  if ! start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" "$@"; then
    fail "berthd starts" "see the log above"
    e2e_finish
  fi
  pass "berthd starts and answers Plugin.Activate on $PLUGIN_SOCK"
}
