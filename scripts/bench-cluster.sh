#!/bin/bash
# CreateVolume through the cluster mode against the single-node mode: berth-bench csi through
# `berthd controller` (the API server of tests/kube_apiserver/api_server.py: the stand-in, or
# a real kube-apiserver when BERTH_KUBE_APISERVER and BERTH_ETCD name one; and one node n1
# with --kubernetes), then against one berthd alone. docs/benchmarks.md records the figures.
#   scripts/bench-cluster.sh            C=16 clients, S=8 seconds per phase
#   C=1 S=8 scripts/bench-cluster.sh
# Needs a build in build/ (berthd, berth-bench), root, and kubectl.
set -u
cd "$(dirname "$0")/.."
B=build/apps/berthd; BENCH=build/bench/berth-bench
D=$(mktemp -d /tmp/berth-bench-cluster.XXXXXX); mkdir -p $D/api $D/n1/kubelet $D/s1/kubelet
python3 tests/kube_apiserver/api_server.py --dir $D/api --deploy deploy/kubernetes --bookmark-seconds 1 > $D/api.log 2>&1 &
API=$!
for i in $(seq 600); do [ -f $D/api/port ] && break; sleep 0.2; done
# The stand-in serves no OpenAPI document for kubectl to validate against.
echo '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}' | kubectl --kubeconfig $D/api/kubeconfig create --validate=false -f - >/dev/null
$B --state-dir $D/n1/state --docker-socket '' --admin-socket '' --csi-endpoint unix://$D/n1/csi.sock \
   --node-id n1 --kubelet-dir $D/n1/kubelet --kubernetes --kubeconfig $D/api/kubeconfig-node --docker-api '' --log-level warn > $D/n1.log 2>&1 &
N1=$!
$B controller --csi-endpoint unix://$D/ctl.sock --kubeconfig $D/api/kubeconfig-controller --log-level warn > $D/ctl.log 2>&1 &
CTL=$!
for i in $(seq 100); do [ -S $D/ctl.sock ] && [ -S $D/n1/csi.sock ] && break; sleep 0.2; done
sleep 3  # the node reports its capacity after its first list
echo "== cluster (berthd controller, the $(cat $D/api/kind) API server, n1)"
$BENCH csi --endpoint unix://$D/ctl.sock --node-endpoint unix://$D/n1/csi.sock --concurrency ${C:-16} \
   --seconds ${S:-8} --pid $N1 --work-dir $D/n1/kubelet
echo "controller CPU: $(awk '{print $14+$15}' /proc/$CTL/stat) ticks; API server CPU (the stand-in's; a real one's children are not counted): $(awk '{print $14+$15}' /proc/$API/stat) ticks; n1 CPU: $(awk '{print $14+$15}' /proc/$N1/stat) ticks"
kill $CTL $N1; wait $CTL $N1 2>/dev/null; kill $API; wait $API 2>/dev/null
$B --state-dir $D/s1/state --docker-socket '' --admin-socket '' --csi-endpoint unix://$D/s1/csi.sock \
   --node-id n1 --kubelet-dir $D/s1/kubelet --log-level warn > $D/s1.log 2>&1 &
S1=$!
for i in $(seq 100); do [ -S $D/s1/csi.sock ] && break; sleep 0.2; done
echo "== single-node"
$BENCH csi --endpoint unix://$D/s1/csi.sock --concurrency ${C:-16} --seconds ${S:-8} --pid $S1 --work-dir $D/s1/kubelet
kill $S1; wait $S1 2>/dev/null
rm -rf "$D"
