#!/usr/bin/env bash
# The metrics endpoint end to end (docs/design.md, "Metrics and counting"): berthd serves
# /metrics, /healthz and /readyz on a free TCP port; /readyz is 503 while the state loads
# and 200 after; a Docker workload (volume create, a container that mounts it, rm) and a
# CSI workload (berth-bench csi) run; `promtool check metrics` accepts the page; a real
# Prometheus scrapes berthd every second, and its HTTP API returns the operation counts
# the workloads produced.
#
#   usage: metrics_e2e.sh PATH/TO/berthd PATH/TO/berthctl PATH/TO/berth-bench
#
# Start-up is held before the state loads by the test-only hold point
# (BERTH_TEST_HOLD_AT=start-loading:FILE) until the test removes FILE.
# Exit 77 (skipped, loudly) without root, dockerd, loop devices or Debian's prometheus.

source "$(dirname "$0")/lib.sh"

BENCH="${3:-}"
e2e_init "${1:-}" "${2:-}"
if [[ -z "$BENCH" || ! -x "$BENCH" ]]; then
  echo "usage: $0 PATH/TO/berthd PATH/TO/berthctl PATH/TO/berth-bench" >&2
  exit 2
fi
need_cmd promtool prometheus
need_cmd prometheus prometheus
need_cmd mkfs.xfs xfsprogs
need_cmd losetup mount
if [[ ! -c /dev/loop-control ]]; then
  skip "needs /dev/loop-control (loop devices) for the CSI workload's block volumes"
fi

CSI_SOCK="$E2E_TMP/csi.sock"
WORK="$E2E_TMP/kubelet"
mkdir -p "$WORK"
CSI_ARGS=(--csi-endpoint "unix://$CSI_SOCK" --node-id metrics-node --kubelet-dir "$WORK")
PROM_PID=""

# Loop devices whose image lies under the temp dir (left only when something failed).
detach_loops() {
  local f
  for f in /sys/block/loop*/loop/backing_file; do
    [[ -r "$f" ]] || continue
    if [[ "$(cat "$f" 2>/dev/null)" == "$E2E_TMP/"* ]]; then
      losetup -d "/dev/$(basename "$(dirname "$(dirname "$f")")")" 2>/dev/null || true
    fi
  done
}
on_cleanup detach_loops
stop_prometheus() {
  if [[ -n "$PROM_PID" ]]; then
    kill -TERM "$PROM_PID" 2>/dev/null
    wait "$PROM_PID" 2>/dev/null
    PROM_PID=""
  fi
}
on_cleanup stop_prometheus

# metrics_address_after LINE: the address berthd logged ("metrics listening on
# HOST:PORT") after line LINE of its log; "" until it did.
metrics_address_after() {
  tail -n +"$(($1 + 1))" "$BERTHD_LOG" | grep -o 'metrics listening on [^ ]*' | tail -n 1 |
    sed 's/^metrics listening on //'
}

# http_get URL: prints "STATUS BODY" (body on one line, newlines dropped).
http_get() {
  local code
  code=$(curl -s -o "$E2E_TMP/.body" -w '%{http_code}' --max-time 5 "$1" 2>/dev/null) || code="000"
  echo "$code $(tr -d '\n' <"$E2E_TMP/.body" 2>/dev/null)"
}

# status_is URL CODE: the URL answers CODE.
status_is() {
  [[ "$(http_get "$1")" == "$2 "* ]]
}

# -- 1. /readyz is 503 while the state loads, 200 after ------------------------------------
# berthd holds at its start-up step "start-loading" (before it reads the state) while
# $HOLD exists (BERTH_TEST_HOLD_AT, persistence/crash_point.hpp).
HOLD="$E2E_TMP/hold-loading"
touch "$HOLD"
on_cleanup "rm -f '$HOLD'"
log_lines=$(wc -l <"$BERTHD_LOG")
echo "==== $(date +%H:%M:%S) start, held at start-loading while $HOLD exists" >>"$BERTHD_LOG"
BERTH_TEST_HOLD_AT="start-loading:$HOLD" "$BERTHD" --state-dir "$STATE" \
  --docker-socket "$PLUGIN_SOCK" --admin-socket "$ADMIN_SOCK" "${CSI_ARGS[@]}" \
  --metrics-address 127.0.0.1:0 "${DOCKER_API_ARGS[@]}" >>"$BERTHD_LOG" 2>&1 &
BERTHD_PID=$!
got_address() {
  [[ -n "$(metrics_address_after "$log_lines")" ]]
}
if ! wait_until 30 got_address; then
  fail "berthd logs 'metrics listening on 127.0.0.1:PORT' before loading its state" \
    "a log line" "none within 30 s: $(tail -n 5 "$BERTHD_LOG")"
  e2e_finish
fi
ADDR=$(metrics_address_after "$log_lines")
URL="http://$ADDR"
check_contains "the metrics endpoint is on loopback, on a port it chose" "127.0.0.1:" "$ADDR"
if [[ "$ADDR" == "127.0.0.1:0" ]]; then
  fail "the logged address names the port bound" "127.0.0.1:N, N > 0" "$ADDR"
fi
check "/readyz while the state loads: 503 naming why" \
  "503 not ready: the state is loading" "$(http_get "$URL/readyz")"
check "/healthz while the state loads: alive (200 loading)" "200 loading" "$(http_get "$URL/healthz")"
loading_page=$(curl -s --max-time 5 "$URL/metrics")
check_contains "/metrics while loading says berth_ready 0" $'\nberth_ready 0' "$loading_page"
if berthd_answers "$PLUGIN_SOCK"; then
  fail "the load is really held: the plugin socket does not answer yet" "no answer" "it answered"
else
  pass "the load is really held: the plugin socket does not answer yet"
fi
check "/readyz is still 503 a second later" "503 not ready: the state is loading" \
  "$(sleep 1; http_get "$URL/readyz")"

check_contains "berthd says it is held before loading" "holding at step start-loading" \
  "$(tail -n +"$((log_lines + 1))" "$BERTHD_LOG")"
log "releasing the load"
rm -f "$HOLD"
if wait_until 30 status_is "$URL/readyz" 200; then
  pass "/readyz turns 200 once the state is loaded and the sockets accept"
else
  fail "/readyz turns 200 once the state is loaded" "200 ok" "$(http_get "$URL/readyz")"
fi
check "/readyz answers ok" "200 ok" "$(http_get "$URL/readyz")"
check "/healthz: the registry and persistence actors answer" "200 ok" "$(http_get "$URL/healthz")"
check "the plugin socket answers" yes "$(berthd_answers "$PLUGIN_SOCK" && echo yes || echo no)"
check "a path the endpoint does not serve is 404" 404 "$(http_get "$URL/nope" | cut -d' ' -f1)"
check "POST /metrics is 405" 405 \
  "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$URL/metrics")"

# -- 2. start-up errors name the address and the option -----------------------------------
check_fails "a second berthd on the same metrics address does not start" \
  timeout 30 "$BERTHD" --state-dir "$E2E_TMP/state2" --docker-socket "" --admin-socket "" \
  "${DOCKER_API_ARGS[@]}" --metrics-address "$ADDR"
check_contains "its error names the address" "cannot bind $ADDR" "$LAST_OUTPUT"
check_contains "its error names the option" "--metrics-address $ADDR" "$LAST_OUTPUT"
check_fails "an address that does not parse is refused" "$BERTHD" --metrics-address nonsense
check_contains "the refusal names the option and the value" "--metrics-address: address 'nonsense'" \
  "$LAST_OUTPUT"

# -- 3. the workloads ----------------------------------------------------------------------
start_dockerd
make_busybox_image berth-metrics-img || skip "could not import the busybox image into dockerd"
check_ok "docker volume create" dk volume create -d "$DRIVER" mvol
check_ok "a container mounts the volume and writes to it" \
  dk run --rm --network none -v mvol:/data berth-metrics-img sh -c 'echo hi > /data/f && cat /data/f'
check_ok "docker volume rm" dk volume rm mvol

out=$(timeout 300 "$BENCH" csi --endpoint "unix://$CSI_SOCK" --concurrency 1 --seconds 1 \
  --prefix metrics --work-dir "$WORK" 2>&1)
rc=$?
echo "$out"
check "berth-bench csi exits 0" 0 "$rc"
bench_json=$(tail -n 1 <<<"$out")
csi_errors=$(json_get "$bench_json" 'd["errors"]' 2>/dev/null || echo "?")
check "berth-bench csi: no errors" 0 "$csi_errors"
pairs=$(json_get "$bench_json" 'd["create_delete_pairs"]' 2>/dev/null || echo 0)
publishes=$(json_get "$bench_json" 'd["publish_unpublish_pairs"]' 2>/dev/null || echo 0)
# Phase 1's pairs, and the one volume the client staged for phase 2 (created, deleted).
creates=$((pairs + 1))
log "the CSI workload: $pairs create+delete pair(s), $publishes publish+unpublish pair(s)"

# -- 4. the page: promtool, content type, families --------------------------------------------
METRICS_FILE="$E2E_TMP/metrics.txt"
ctype=$(curl -s -o "$METRICS_FILE" -w '%{content_type}' --max-time 5 "$URL/metrics")
check "/metrics has the exposition format's content type" \
  "text/plain; version=0.0.4; charset=utf-8" "$ctype"
if promtool check metrics <"$METRICS_FILE" >"$E2E_TMP/promtool.out" 2>&1; then
  pass "promtool check metrics accepts the page"
else
  fail "promtool check metrics accepts the page" "no problems" "$(head -n 20 "$E2E_TMP/promtool.out")"
fi
for family in berth_operations_total berth_operation_duration_seconds berth_volumes \
  berth_mount_ids berth_csi_staged berth_csi_published berth_volumes_uncertain \
  berth_reconcile_pending_volumes berth_modify_requests_total berth_modify_backend_calls_total \
  berth_journal_appends_total berth_journal_fsync_duration_seconds berth_group_commit_records \
  berth_journal_bytes berth_snapshot_duration_seconds berth_backend_call_duration_seconds \
  berth_backend_timeouts_total berth_reconcile_actions_total berth_mount_ids_released_total berth_docker_engine_up \
  berth_ready berth_build_info \
  process_start_time_seconds process_resident_memory_bytes process_open_fds; do
  if grep -q "^# TYPE $family " "$METRICS_FILE"; then
    pass "the page has $family"
  else
    fail "the page has $family" "a '# TYPE $family' line" "none"
  fi
done
check "the page says berth_ready 1" 1 \
  "$(awk '$1 == "berth_ready" { print $2 }' "$METRICS_FILE")"

# -- 5. a real Prometheus scrapes berthd ------------------------------------------------------
PROM_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PROM="http://127.0.0.1:$PROM_PORT"
mkdir -p "$E2E_TMP/prometheus/data"
cat >"$E2E_TMP/prometheus/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: berthd
    scrape_interval: 1s
    static_configs:
      - targets: ['$ADDR']
EOF
log "starting prometheus on $PROM (log $E2E_TMP/prometheus/prometheus.log)"
prometheus --config.file="$E2E_TMP/prometheus/prometheus.yml" \
  --storage.tsdb.path="$E2E_TMP/prometheus/data" --web.listen-address="127.0.0.1:$PROM_PORT" \
  >"$E2E_TMP/prometheus/prometheus.log" 2>&1 &
PROM_PID=$!

# prom_value QUERY: the value of the query's first result ("" when it has none).
prom_value() {
  local out
  out=$(curl -s --max-time 5 "$PROM/api/v1/query" --data-urlencode "query=$1" 2>/dev/null) || return 0
  json_get "$out" '(d["data"]["result"][0]["value"][1] if d.get("status") == "success" and d["data"]["result"] else "")' 2>/dev/null
}
# prom_is QUERY VALUE: the query's value is VALUE now.
prom_is() {
  [[ "$(prom_value "$1")" == "$2" ]]
}

if wait_until 60 prom_is 'up{job="berthd"}' 1; then
  pass "Prometheus scrapes berthd: up == 1"
else
  fail "Prometheus scrapes berthd: up == 1" "1" "'$(prom_value 'up{job="berthd"}')'; targets: \
$(curl -s --max-time 5 "$PROM/api/v1/targets" | head -c 600)"
fi
check "Prometheus sees berth_ready 1" 1 "$(prom_value 'berth_ready')"
check "Prometheus sees berth_build_info" 1 "$(prom_value 'berth_build_info')"
check_nonempty "Prometheus sees process_start_time_seconds" "$(prom_value 'process_start_time_seconds')"
check_nonempty "Prometheus sees berth_volumes" "$(prom_value 'sum(berth_volumes)')"
check_nonempty "Prometheus sees berth_journal_fsync_duration_seconds" \
  "$(prom_value 'berth_journal_fsync_duration_seconds_count')"

# The counts the workloads produced (every request is counted into berthd's telemetry).
expect_count() {
  local what="$1" query="$2" want="$3"
  if wait_until 15 prom_is "$query" "$want"; then
    pass "$what: $want"
  else
    fail "$what" "$query == $want" "'$(prom_value "$query")'"
  fi
}
# dockerd mounts a volume twice for one `docker run`: at create, to copy the image's
# content at the mount point (/data exists in the image) into the empty volume, and at
# start; each is a first mount, which berthd logs. The log is the independent count.
mounts=$(grep -c "volume mvol mounted at " "$BERTHD_LOG")
unmounts=$(grep -c "volume mvol unmounted (id " "$BERTHD_LOG")
log "berthd's log: mvol mounted $mounts time(s), unmounted $unmounts time(s)"
if ((mounts < 1)); then
  fail "berthd logged the container's mount of mvol" ">= 1 'volume mvol mounted at' line" "$mounts"
fi
expect_count "Docker mounts counted (as many as berthd logged)" \
  'berth_operations_total{protocol="docker",operation="mount",code="ok"}' "$mounts"
expect_count "Docker unmounts counted (as many as berthd logged)" \
  'berth_operations_total{protocol="docker",operation="unmount",code="ok"}' "$unmounts"
expect_count "Docker creates counted" \
  'berth_operations_total{protocol="docker",operation="create",code="ok"}' 1
expect_count "Docker removes counted" \
  'berth_operations_total{protocol="docker",operation="remove",code="ok"}' 1
expect_count "CSI CreateVolume counted (bench pairs + the staged volume)" \
  'berth_operations_total{protocol="csi",operation="CreateVolume",code="ok"}' "$creates"
expect_count "CSI DeleteVolume counted" \
  'berth_operations_total{protocol="csi",operation="DeleteVolume",code="ok"}' "$creates"
expect_count "CSI NodeStageVolume counted" \
  'berth_operations_total{protocol="csi",operation="NodeStageVolume",code="ok"}' 1
expect_count "CSI NodePublishVolume counted" \
  'berth_operations_total{protocol="csi",operation="NodePublishVolume",code="ok"}' "$publishes"
expect_count "every mount's latency is in the histogram" \
  'berth_operation_duration_seconds_count{protocol="docker",operation="mount"}' "$mounts"

# The dashboard's queries against this Prometheus (tests/deploy/dashboard_check.py comes
# with deploy/grafana/; until it lands in this tree there is nothing to check).
DASHBOARD_CHECK="$(dirname "$0")/../deploy/dashboard_check.py"
if [[ -f "$DASHBOARD_CHECK" ]]; then
  curl -s --max-time 5 -o "$METRICS_FILE" "$URL/metrics"
  check_ok "the Grafana dashboard's queries work on this Prometheus" \
    python3 "$DASHBOARD_CHECK" --prometheus "$PROM" --metrics-file "$METRICS_FILE"
else
  log "NOTE: $DASHBOARD_CHECK is not in this tree: the dashboard is not checked"
fi

stop_prometheus
stop_dockerd
check_ok "berthd stops (SIGTERM)" stop_berthd
check_contains "the metrics endpoint stopped with it" "metrics: stopped accepting on $ADDR" \
  "$(cat "$BERTHD_LOG")"
check "the port is closed after the stop" 000 \
  "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$URL/readyz")"
e2e_finish
