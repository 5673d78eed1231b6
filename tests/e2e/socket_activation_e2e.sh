#!/usr/bin/env bash
# berthd under socket activation (deploy/systemd/berthd.socket), with systemd's own
# systemd-socket-activate holding the sockets as PID 1 would:
# - berthd does not run until a plugin client's first request, which it then answers on the
#   passed socket;
# - after kill -9 the next request is answered by a restarted berthd on the same socket,
#   and the socket file never disappears in between (nor at a graceful stop);
# - what was acknowledged before the kill is still there.
# systemd-socket-activate execs its command once; the restart of berthd.service
# (Restart=on-failure) is a bash loop under it that keeps the passed sockets open, as systemd
# keeps them, and gives each berthd its own LISTEN_PID.
#
#   usage: socket_activation_e2e.sh PATH/TO/berthd PATH/TO/berthctl
# Exit 77 (skipped, loudly) when not root or without systemd-socket-activate.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"
need_cmd systemd-socket-activate systemd

STOP_FILE="$E2E_TMP/stop-supervisor"
SUPERVISOR_LOG="$E2E_TMP/supervisor.log"
GONE_LOG="$E2E_TMP/socket-gone.log"

# The berthd the supervisor runs now ("" when none).
berthd_pid() {
  pgrep -f -x -- "$BERTHD --state-dir $STATE .*" | head -n 1
}

systemd-socket-activate -l "$PLUGIN_SOCK" -l "$ADMIN_SOCK" -- bash -c '
  stop_file=$1
  shift
  while :; do
    (export LISTEN_PID=$BASHPID; exec "$@")
    echo "supervisor: berthd exited with status $?"
    [[ -e $stop_file ]] && exit 0
    sleep 0.2
  done' supervisor "$STOP_FILE" "$BERTHD" --state-dir "$STATE" --docker-socket "$PLUGIN_SOCK" \
  --admin-socket "$ADMIN_SOCK" --metrics-address "" --docker-api "" >>"$SUPERVISOR_LOG" 2>&1 &
SUPERVISOR_PID=$!
on_cleanup "touch '$STOP_FILE'; pkill -KILL -f -x -- '$BERTHD --state-dir $STATE .*'; kill $SUPERVISOR_PID 2>/dev/null; wait $SUPERVISOR_PID 2>/dev/null"
on_cleanup "cat '$SUPERVISOR_LOG' >>'$BERTHD_LOG'"

if ! wait_until 10 test -S "$PLUGIN_SOCK"; then
  fail "systemd-socket-activate holds the plugin socket" "see $SUPERVISOR_LOG"
  e2e_finish
fi
check "no berthd runs before the first request" "" "$(berthd_pid)"

# A watcher that notes every moment the socket file is missing, until the end.
(while [[ ! -e "$STOP_FILE" ]]; do
  [[ -S "$PLUGIN_SOCK" ]] || echo "$(date +%T.%N) gone" >>"$GONE_LOG"
  sleep 0.01
done) &
WATCHER_PID=$!
on_cleanup "kill $WATCHER_PID 2>/dev/null"

out=$(plugin_post "$PLUGIN_SOCK" Plugin.Activate '{}' 2>&1)
check_contains "the first request starts berthd and is answered" "VolumeDriver" "$out"
first=$(berthd_pid)
check_nonempty "berthd runs now" "$first"
check_contains "berthd says the socket came from systemd" \
  "listening on $PLUGIN_SOCK (socket passed by systemd)" "$(cat "$SUPERVISOR_LOG")"
check "Create v1 on the passed socket" "" "$(plugin_err Create '{"Name":"v1","Opts":{}}')"
check "Mount v1 c1" "" "$(mount_id v1 c1)"
check_mounted "Mount v1" v1
ctl=$("$BERTHCTL" --socket "$ADMIN_SOCK" ls 2>&1)
check_contains "berthctl is answered on the passed admin socket" "v1" "$ctl"

kill -KILL "$first"
out=$(plugin_post "$PLUGIN_SOCK" VolumeDriver.Get '{"Name":"v1"}' 2>&1)
check_contains "after kill -9, the next request is answered" '"Name":"v1"' "$out"
second=$(berthd_pid)
check_nonempty "by a restarted berthd" "$second"
if [[ -n "$second" && "$second" == "$first" ]]; then
  fail "the answer came from a new berthd" "a pid other than $first" "$second"
fi
check "the count acknowledged before the kill holds: Unmount v1 c1" "" "$(unmount_id v1 c1)"
check_unmounted "Unmount v1 after the restart" v1

# A graceful stop leaves the passed socket's file too (systemd owns it).
kill -TERM "$second"
wait_until 20 bash -c "! kill -0 $second 2>/dev/null" || fail "berthd stops on SIGTERM" "within 20 s"
out=$(plugin_post "$PLUGIN_SOCK" VolumeDriver.List '{}' 2>&1)
check_contains "after a graceful stop the next request is answered again" '"v1"' "$out"

touch "$STOP_FILE"
wait "$WATCHER_PID" 2>/dev/null
if [[ -s "$GONE_LOG" ]]; then
  fail "the socket file never disappeared" "no gap" "$(wc -l <"$GONE_LOG") sample(s) without it, first $(head -n 1 "$GONE_LOG")"
else
  pass "the socket file never disappeared (sampled every 10 ms)"
fi
third=$(berthd_pid)
[[ -n "$third" ]] && kill -TERM "$third"
wait "$SUPERVISOR_PID" 2>/dev/null
e2e_finish
