#!/usr/bin/env bash
# The Docker Engine API client (protocols/docker/engine) against a real, private dockerd:
# ping, info, containers with a plain local volume, the events stream, the dockerd instance
# after SIGKILL + restart, and the reconnecting follower catching up when dockerd is back.
#
#   docker_engine_e2e.sh PATH/TO/berthd PATH/TO/docker-engine-probe
# (berthd only satisfies e2e_init; this test does not start it.)
source "$(dirname "$0")/lib.sh"

PROBE="${2:-}"
if [[ -z "$PROBE" || ! -x "$PROBE" ]]; then
  echo "usage: $0 BERTHD DOCKER_ENGINE_PROBE ('$PROBE' is not executable)" >&2
  exit 2
fi
e2e_init "$1" ""
start_dockerd
make_busybox_image bb:1 || skip "cannot import the busybox image"
URL="$DOCKER_HOST"

# field KEY LINE: the value of KEY=VALUE in LINE.
field() {
  sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2" | head -1
}

log "-- an absent socket"
check_fails "the probe fails on an absent socket" "$PROBE" "unix://$E2E_TMP/absent.sock" ping
check_contains "the error names the socket" "$E2E_TMP/absent.sock" "$LAST_OUTPUT"
check_contains "and says what happened" "connect: No such file or directory" "$LAST_OUTPUT"

log "-- ping and info"
ping1=$("$PROBE" "$URL" ping 2>&1)
check_contains "ping reads Api-Version" "api_version=1.41" "$ping1"
check_contains "ping reads Server" "server=Docker/20.10" "$ping1"
check "the instance is dockerd's pid (SO_PEERCRED)" "$DOCKERD_PID" "$(field pid "$ping1")"
ticks1=$(field start_ticks "$ping1")
check "its start time is /proc/PID/stat field 22" "$(awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$DOCKERD_PID/stat")" "$ticks1"
info1=$("$PROBE" "$URL" info 2>&1)
id1=$(field id "$info1")
check_nonempty "info reads the engine ID" "$id1"
check "info reads DockerRootDir" "$DOCKER_DIR/data" "$(field root "$info1")"
check "info reads ServerVersion" "$(dk version --format '{{.Server.Version}}')" "$(field version "$info1")"
check_contains "info reads SystemTime" "$(date -u +%Y-%m-%dT)" "$(field time "$info1")"

log "-- containers with a plain local volume"
dk volume create plainv >/dev/null
c1=$(dk run -d --name c1 -v plainv:/data -v "$E2E_TMP:/hosttmp" bb:1 sleep 1000)
dk create --name c0 bb:1 true >/dev/null
list=$("$PROBE" "$URL" containers 2>&1)
check_contains "c1 is listed running with its volume mount only" "container $c1 running /c1 volume=plainv:local:/data"$'\n' "$list"$'\n'
check_contains "a created container is listed" " created /c0" "$list"

log "-- the events stream"
"$PROBE" "$URL" events 8 >"$E2E_TMP/events.out" 2>&1 &
events_pid=$!
on_cleanup "kill $events_pid"
wait_until 10 grep -q '^open ' "$E2E_TMP/events.out" || fail "the events stream opens" "$(cat "$E2E_TMP/events.out")"
dk run --name c2 bb:1 sh -c 'exit 3' >/dev/null
c2=$(dk inspect c2 --format '{{.Id}}')
dk rm c2 >/dev/null
wait_until 10 grep -q "^event destroy $c2" "$E2E_TMP/events.out"
wait "$events_pid"
check "the events probe stops cleanly from its timer thread" "0" "$?"
ev=$(cat "$E2E_TMP/events.out")
check_contains "start of c2" "event start $c2 exit=-1" "$ev"
check_contains "die of c2 with its exit code" "event die $c2 exit=3" "$ev"
check_contains "destroy of c2" "event destroy $c2" "$ev"
check_contains "the stream ends stopped" "stopped" "$ev"
check "the stream's instance is dockerd" "$DOCKERD_PID" "$(field pid "$(grep '^open' <<<"$ev")")"

log "-- SIGKILL and restart of dockerd under the follower"
"$PROBE" "$URL" follow 300 >"$E2E_TMP/follow.out" 2>"$E2E_TMP/follow.log" &
follow_pid=$!
on_cleanup "kill $follow_pid"
wait_until 10 grep -q '^open .* changed=1' "$E2E_TMP/follow.out" || fail "the follower opens" "$(cat "$E2E_TMP/follow.out")"
# Started again by the new dockerd as it starts, before the follower is back: the follower
# asks for the events since its last one, so it still sees that start.
c4=$(dk run -d --name c4 --restart always bb:1 sleep 1000)
wait_until 10 grep -q "^event start $c4" "$E2E_TMP/follow.out"
old_pid=$DOCKERD_PID
kill -KILL "$DOCKERD_PID"
wait "$DOCKERD_PID" 2>/dev/null
DOCKERD_PID=""
sleep 2 # a few backoff rounds against the dead socket
start_dockerd
ping2=$("$PROBE" "$URL" ping 2>&1)
check "the restarted dockerd answers from its new pid" "$DOCKERD_PID" "$(field pid "$ping2")"
if [[ "$(field pid "$ping2")/$(field start_ticks "$ping2")" != "$old_pid/$ticks1" ]]; then
  pass "a different instance after SIGKILL + restart ($old_pid/$ticks1 -> $(field pid "$ping2")/$(field start_ticks "$ping2"))"
else
  fail "a different instance after SIGKILL + restart" "both $old_pid/$ticks1"
fi
check "the engine ID stays the same across the restart" "$id1" "$(field id "$("$PROBE" "$URL" info 2>&1)")"
check "c1 was killed with dockerd (no live-restore)" "exited" "$("$PROBE" "$URL" containers | awk -v c="$c1" '$2 == c { print $3 }')"

if wait_until 15 bash -c "[[ \$(grep -c '^open ' '$E2E_TMP/follow.out') -ge 2 ]]"; then
  pass "the follower reconnects once dockerd is back"
else
  fail "the follower reconnects once dockerd is back" "$(cat "$E2E_TMP/follow.out")"
fi
second=$(grep '^open ' "$E2E_TMP/follow.out" | sed -n 2p)
check "the follower's second stream is the new instance" "pid=$DOCKERD_PID start_ticks=$(field start_ticks "$ping2") changed=1" "${second#open }"
# count_c4_starts: how many start events of c4 the follower printed (1 before the kill).
count_c4_starts() {
  grep -c "^event start $c4" "$E2E_TMP/follow.out"
}
if wait_until 10 bash -c "[[ \$(grep -c '^event start $c4' '$E2E_TMP/follow.out') -ge 2 ]]"; then
  pass "the follower sees the restart-always container started again by the new dockerd"
else
  fail "the follower sees the restart-always container started again by the new dockerd" \
    "start events of c4: $(count_c4_starts)" "$(cat "$E2E_TMP/follow.out")"
fi
dk run --name c3 bb:1 true >/dev/null
c3=$(dk inspect c3 --format '{{.Id}}')
if wait_until 10 grep -q "^event die $c3 exit=0" "$E2E_TMP/follow.out"; then
  pass "the follower sees the new dockerd's events"
else
  fail "the follower sees the new dockerd's events" "$(cat "$E2E_TMP/follow.out")"
fi
check "it logged once that dockerd went away" "1" "$(grep -c 'dockerd went away' "$E2E_TMP/follow.log")"
check "and once that it is back" "1" "$(grep -c 'dockerd answers again' "$E2E_TMP/follow.log")"
check_contains "the log says the instance is new" "a new instance" "$(grep 'answers again' "$E2E_TMP/follow.log")"
log "follower's log:"
grep -v '\[debug\]' "$E2E_TMP/follow.log" | sed 's/^/    /'

log "-- socket activation: the listener is not dockerd"
# As Debian's docker.socket does: another process (here a small Python stand-in for systemd)
# listens and hands the socket to `dockerd -H fd://`. SO_PEERCRED then names the listener;
# the client must still find dockerd (the holder of the accepted end).
stop_dockerd
cat >"$E2E_TMP/activate.py" <<'PY'
import os, socket, sys
path = sys.argv[1]
if os.path.exists(path):
    os.unlink(path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(16)
pid = os.fork()
if pid == 0:
    os.dup2(s.fileno(), 3)
    os.set_inheritable(3, True)
    os.environ["LISTEN_FDS"] = "1"
    os.environ["LISTEN_PID"] = str(os.getpid())
    os.execvp(sys.argv[2], sys.argv[2:])
os.waitpid(pid, 0)
PY
python3 "$E2E_TMP/activate.py" "$DOCKER_DIR/docker.sock" dockerd --config-file "$DOCKER_DIR/daemon.json" \
  --data-root "$DOCKER_DIR/data" --exec-root "$DOCKER_DIR/exec" -H fd:// --pidfile "$DOCKER_DIR/docker.pid" \
  --iptables=false --ip-masq=false --bridge=none --storage-driver=vfs --ip-forward=false \
  --userland-proxy=false >"$DOCKER_DIR/dockerd-activated.log" 2>&1 &
holder_pid=$!
on_cleanup "kill \$(cat '$DOCKER_DIR/docker.pid'); sleep 2; kill $holder_pid"
if wait_until 60 "$PROBE" "$URL" ping; then
  activated=$(cat "$DOCKER_DIR/docker.pid")
  ping3=$("$PROBE" "$URL" ping 2>&1)
  check "socket-activated: the instance is dockerd (pid from its pidfile), not the listener $holder_pid" \
    "$activated" "$(field pid "$ping3")"
  check "socket-activated: the events stream names dockerd too" "$activated" \
    "$(field pid "$("$PROBE" "$URL" events 1 | grep '^open')")"
  kill -TERM "$activated"
  wait "$holder_pid" 2>/dev/null
else
  fail "socket-activated dockerd comes up" "$(tail -5 "$DOCKER_DIR/dockerd-activated.log")"
fi

e2e_finish
