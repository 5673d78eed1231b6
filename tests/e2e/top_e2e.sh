#!/usr/bin/env bash
# `berthctl status` and `berthctl top` against a real berthd, top in a real terminal
# (docs/design.md, "Metrics and counting"): a tmux pane runs a shell, the shell runs top
# while other berthctl calls make a rate; capture-pane must show the operations with
# their rates and p50/p99; `q` (and later SIGTERM) must end it with the terminal as it
# was (termios settings, the normal screen, the cursor shown). Also: top without a
# terminal, top --json, and what berthctl says once berthd is stopped.
#
#   usage: top_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# Exit 77 (skipped, loudly) when not root or without tmux.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"
need_cmd tmux tmux

ctl() {
  "$BERTHCTL" --socket "$ADMIN_SOCK" "$@"
}

# The metrics endpoint (when this berthd has one) is turned off: its default port may be
# taken by another test or a real berthd.
extra=()
if "$BERTHD" --help 2>&1 | grep -- '--metrics-address' >/dev/null; then
  extra=(--metrics-address "")
else
  log "this berthd has no --metrics-address: started without it"
fi
if ! start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK" "${extra[@]+"${extra[@]}"}"; then
  fail "berthd starts on a fresh state dir" "see the log above"
  e2e_finish
fi

# -- status ---------------------------------------------------------------------------
# The volume, mount and journal figures are counted by the volume actors and the
# persistence actor (their telemetry); status only reads them.

check "Create v1" "" "$(create_vol v1)"
check "Mount v1 c1" "" "$(mount_id v1 c1)"
out=$(ctl status 2>&1)
check_contains "status: the version" "version:    berthd " "$out"
check_contains "status: ready" "ready:      yes" "$out"
check_contains "status: the volume, mounted" "volumes:    1 (0 idle, 1 mounted" "$out"
check_contains "status: the mount ID" "mounts:     1 Docker mount ID;" "$out"
check_contains "status: the last fsync" "last fsync: " "$out"
json=$(ctl status --json 2>&1)
check "status --json: ready" "true" "$(json_get "$json" 'd["ready"]' 2>&1)"
check "status --json: mount_ids" "1" "$(json_get "$json" 'd["mount_ids"]' 2>&1)"
check "status --json: journal_bytes > 0" "true" "$(json_get "$json" 'd["journal_bytes"] > 0' 2>&1)"

# -- top without a terminal, and --json -------------------------------------------------

check_fails "top without a terminal fails" ctl top
check_contains "top without a terminal says so" "top needs a terminal" "$LAST_OUTPUT"

# Requests while the rest runs: volumes and inspect, about 50 per second in all.
(
  while :; do
    "$BERTHCTL" --socket "$ADMIN_SOCK" volumes >/dev/null 2>&1
    "$BERTHCTL" --socket "$ADMIN_SOCK" inspect v1 >/dev/null 2>&1
    sleep 0.02
  done
) &
LOAD_PID=$!
on_cleanup "kill $LOAD_PID"

json=$(ctl top --json --interval 0.5 2>&1)
check "top --json: admin list has a rate" "true" \
  "$(json_get "$json" 'any(o["operation"] == "list" and o["rate_per_second"] > 0 for o in d["operations"])' 2>&1)"
check "top --json: admin get has a p99" "true" \
  "$(json_get "$json" 'any(o["operation"] == "get" and (o["p99_seconds"] or 0) > 0 for o in d["operations"])' 2>&1)"

# -- top in a terminal -------------------------------------------------------------------

TMUX_SOCK="$E2E_TMP/tmux.sock"
tm() {
  tmux -S "$TMUX_SOCK" "$@"
}
on_cleanup "tmux -S '$TMUX_SOCK' kill-server"
tm new-session -d -s top -x 120 -y 30 "env PS1='$ ' bash --norc --noprofile"
screen() {
  tm capture-pane -p -t top
}
pane() {
  tm display-message -p -t top "$1"
}
# run_in_pane CMD: types CMD and Enter into the pane's shell.
run_in_pane() {
  tm send-keys -t top -l "$1"
  tm send-keys -t top Enter
}
# The admin list row has a rate above 0 and latencies in p50 and p99.
list_row_live() {
  screen | awk '$1 == "admin" && $2 == "list" && $3 + 0 > 0 && $5 ~ /s$/ && $6 ~ /s$/ { ok = 1 } END { exit !ok }'
}
screen_has() {
  screen | grep -F -- "$1" >/dev/null
}

run_in_pane "stty -g >$E2E_TMP/stty.before; clear"
run_in_pane "$BERTHCTL --socket $ADMIN_SOCK top --interval 0.5; echo top-exit=\$?; stty -g >$E2E_TMP/stty.after"
if wait_until 15 list_row_live; then
  pass "top shows admin list with a rate and p50/p99"
else
  fail "top shows admin list with a rate and p50/p99" "screen:" "$(screen)"
fi
shown=$(screen)
check "top's header has the columns" "PROTOCOL OPERATION OPS/S ERR/S P50 P99 TOTAL" \
  "$(screen | awk '$1 == "PROTOCOL" { $1 = $1; print; exit }')"
check_contains "top shows admin get" "admin     get" "$shown"
check_contains "top says how to quit" "q quits" "$shown"
check "top is on the alternate screen" 1 "$(pane '#{alternate_on}')"
check "top hides the cursor" 0 "$(pane '#{cursor_flag}')"
# Sorted by rate: the first row under the header is not a row with rate 0.
first_rate=$(screen | awk 'seen { print $3; exit } /^PROTOCOL/ { seen = 1 }')
check "top's first row has the highest rate (non-zero)" "True" \
  "$(python3 -c "print($first_rate > 0)" 2>&1)"

tm send-keys -t top q
if wait_until 10 screen_has "top-exit=0"; then
  pass "q quits top (exit 0)"
else
  fail "q quits top (exit 0)" "screen:" "$(screen)"
fi
wait_until 5 test -s "$E2E_TMP/stty.after"
check "after q: the terminal's settings are as before" "$(cat "$E2E_TMP/stty.before")" \
  "$(cat "$E2E_TMP/stty.after" 2>/dev/null)"
check "after q: back on the normal screen" 0 "$(pane '#{alternate_on}')"
check "after q: the cursor is shown" 1 "$(pane '#{cursor_flag}')"

# SIGTERM to top (found as the pane shell's child, by its parent's pid): same restore.
rm -f "$E2E_TMP/stty.after"
run_in_pane "clear; $BERTHCTL --socket $ADMIN_SOCK top --interval 0.5; echo top-exit=\$?; stty -g >$E2E_TMP/stty.after"
wait_until 15 screen_has "PROTOCOL"
shell_pid=$(pane '#{pane_pid}')
top_pid=$(pgrep -P "$shell_pid" | head -1)
if [[ -n "$top_pid" ]]; then
  kill -TERM "$top_pid"
  if wait_until 10 screen_has "top-exit=143"; then
    pass "SIGTERM ends top (exit 143)"
  else
    fail "SIGTERM ends top (exit 143)" "screen:" "$(screen)"
  fi
  wait_until 5 test -s "$E2E_TMP/stty.after"
  check "after SIGTERM: the terminal's settings are as before" "$(cat "$E2E_TMP/stty.before")" \
    "$(cat "$E2E_TMP/stty.after" 2>/dev/null)"
  check "after SIGTERM: back on the normal screen" 0 "$(pane '#{alternate_on}')"
  check "after SIGTERM: the cursor is shown" 1 "$(pane '#{cursor_flag}')"
else
  fail "top runs in the pane for SIGTERM" "no child of the pane's shell $shell_pid" "$(screen)"
fi

# -- berthd stopped ------------------------------------------------------------------------

kill "$LOAD_PID" 2>/dev/null
wait "$LOAD_PID" 2>/dev/null
check "Unmount v1 c1" "" "$(unmount_id v1 c1)"
check_ok "berthd stops (SIGTERM)" stop_berthd
check_fails "status with berthd stopped fails" ctl status
check_contains "it says berthd is not running" "berthd is not running" "$LAST_OUTPUT"
check_contains "it names the socket" "$ADMIN_SOCK" "$LAST_OUTPUT"
check_contains "it says what to do" "systemctl start berthd" "$LAST_OUTPUT"

e2e_finish
