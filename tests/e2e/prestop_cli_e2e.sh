#!/usr/bin/env bash
# `berthd prestop` as kubelet runs it: the subcommand is dispatched before the daemon's
# options, bad usage exits 2 naming the option, anything else exits 0 and logs a line
# (to --log-file when given). Needs no root and no Kubernetes API.
set -uo pipefail
berthd=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$berthd" prestop --node-name n1 --bogus 2>"$tmp/err"; rc=$?
[ "$rc" = 2 ] || fail "--bogus: exit $rc, want 2"
grep -q 'unknown option "--bogus"' "$tmp/err" || fail "--bogus not named: $(cat "$tmp/err")"
grep -q 'Usage: berthd prestop' "$tmp/err" || fail "no usage after a usage error"

env -u CSI_NODE_NAME -u NODE_NAME "$berthd" prestop 2>"$tmp/err"; rc=$?
[ "$rc" = 2 ] || fail "no node name: exit $rc, want 2"
grep -q -- '--node-name' "$tmp/err" || fail "missing node name not explained: $(cat "$tmp/err")"

"$berthd" prestop --help >"$tmp/out"; rc=$?
[ "$rc" = 0 ] || fail "--help: exit $rc"
grep -q -- '--deadline-s' "$tmp/out" || fail "--help lacks --deadline-s"

# No API server here: whether built with the client or not, it logs why it does not wait
# and exits 0 well before the deadline.
env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT \
  timeout 20 "$berthd" prestop --node-name n1 --deadline-s 3 --log-file "$tmp/log"; rc=$?
[ "$rc" = 0 ] || fail "no API: exit $rc, want 0"
grep -q 'prestop: ' "$tmp/log" || fail "--log-file got no line: $(cat "$tmp/log")"

"$berthd" --help >/dev/null || fail "berthd --help broke"
echo "prestop_cli: ok"
