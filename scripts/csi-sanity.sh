#!/usr/bin/env bash
# Runs the CSI conformance suite, csi-sanity, against berth (a development tool: the project
# cannot build csi-sanity from its own files, so the test command does not run it).
#
#   scripts/csi-sanity.sh CSI_SANITY [single|split] [MUTABLE_YAML]
#
# single: one berthd serves the Controller and the Node service, as on one machine.
# split:  the cluster mode: `berthd controller` serves the Controller service and one node
#         agent (`berthd --kubernetes`) the Node service, on the Kubernetes API server of
#         tests/kube_apiserver/api_server.py (the stand-in, or a real kube-apiserver when
#         BERTH_KUBE_APISERVER and BERTH_ETCD name one: docs/testing.md), each with its own
#         ServiceAccount's kubeconfig, and the Node object n1 registered as kubelet would.
# MUTABLE_YAML is passed as --csi.testvolumemutableparameters. Uses build/apps/berthd; the
# logs stay in the printed directory.
set -u -o pipefail
sanity=${1:?usage: scripts/csi-sanity.sh CSI_SANITY [single|split] [MUTABLE_YAML]}
mode=${2:-single}
mutable=${3:-}
src=$(cd "$(dirname "$0")/.." && pwd)
berthd="$src/build/apps/berthd"
[[ -x "$berthd" ]] || { echo "csi-sanity.sh: build berthd first (scripts/build.sh)" >&2; exit 2; }
[[ "$mode" == single || "$mode" == split ]] || { echo "csi-sanity.sh: mode is single or split, not $mode" >&2; exit 2; }
dir=$(mktemp -d /tmp/berth-sanity.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT
wait_for() { # wait_for PATH [TRIES]: up to TRIES/5 s (default 20 s) for PATH to exist
  for _ in $(seq "${2:-100}"); do [[ -e "$1" ]] && return 0; sleep 0.2; done
  echo "csi-sanity.sh: $1 did not appear; see the logs in $dir" >&2
  exit 1
}
node_args=()
controller=()
if [[ "$mode" == split ]]; then
  mkdir -p "$dir/api"
  python3 "$src/tests/kube_apiserver/api_server.py" --dir "$dir/api" --deploy "$src/deploy/kubernetes" \
    --bookmark-seconds 1 >"$dir/apiserver.log" 2>&1 &
  pids+=($!)
  wait_for "$dir/api/port" 600 # a real server: etcd, kube-apiserver, the CRDs and RBAC
  echo '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}' \
    | kubectl --kubeconfig "$dir/api/kubeconfig" create --validate=false -f - >/dev/null || exit 1
  node_args=(--kubernetes --kubeconfig "$dir/api/kubeconfig-node")
  "$berthd" controller --csi-endpoint "unix://$dir/controller.sock" --csi-capabilities 1.9 \
    --kubeconfig "$dir/api/kubeconfig-controller" --log-level debug >"$dir/controller.log" 2>&1 &
  pids+=($!)
  controller=(--csi.controllerendpoint "$dir/controller.sock")
fi
# csi-sanity v5.3.1 fails a driver that advertises a capability newer than CSI 1.9
# (docs/testing.md, "CSI conformance: csi-sanity"): berthd advertises CSI 1.9's only.
"$berthd" --state-dir "$dir/state" --docker-socket '' --admin-socket "$dir/admin.sock" \
  --csi-capabilities 1.9 \
  --csi-endpoint "unix://$dir/csi.sock" --node-id n1 --kubelet-dir "$dir" --docker-api '' \
  --metrics-address '' --log-level debug "${node_args[@]+"${node_args[@]}"}" >"$dir/berthd.log" 2>&1 &
pids+=($!)
wait_for "$dir/csi.sock"
[[ "$mode" == single ]] || wait_for "$dir/controller.sock"
extra=()
[[ -z "$mutable" ]] || extra=(--csi.testvolumemutableparameters "$mutable")
"$sanity" --csi.endpoint "$dir/csi.sock" "${controller[@]+"${controller[@]}"}" \
  --csi.stagingdir "$dir/stage" --csi.mountdir "$dir/mnt" --csi.testvolumesize 1073741824 \
  "${extra[@]+"${extra[@]}"}" >"$dir/sanity.log" 2>&1
rc=$?
sed 's/\x1b\[[0-9;]*m//g' "$dir/sanity.log" | grep -E '^\s*\[FAIL\]|Passed \|' | tail -n 20
echo "csi-sanity.sh: $mode, exit $rc; logs in $dir"
exit "$rc"
