#!/usr/bin/env python3
"""The Kubernetes API server the cluster tests and scripts run berth on: a real
kube-apiserver on etcd when $BERTH_KUBE_APISERVER and $BERTH_ETCD name their binaries
(real_server.py; docs/testing.md, "On a real API server", says how a developer gets them),
else the stand-in (standin.py), which CI runs.

    api_server.py --dir DIR --deploy deploy/kubernetes [--bookmark-seconds 1]
                  [--status-write-latency-ms 0]

Either writes, in DIR: kubeconfig (an administrator), kubeconfig-controller and
kubeconfig-node (berth's two ServiceAccounts; on the stand-in, which has no RBAC, copies of
the first), kind ("real" or "standin"), and port last. --bookmark-seconds and
--status-write-latency-ms shape the stand-in only: a real server's bookmarks and latency are
its own. Serves until SIGTERM or SIGINT.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", required=True)
    p.add_argument("--deploy", required=True)
    p.add_argument("--bookmark-seconds", default="1")
    p.add_argument("--status-write-latency-ms", default="0")
    opts = p.parse_args()
    os.makedirs(opts.dir, exist_ok=True)
    apiserver = os.environ.get("BERTH_KUBE_APISERVER", "")
    etcd = os.environ.get("BERTH_ETCD", "")
    real = bool(apiserver and etcd)
    with open(os.path.join(opts.dir, "kind"), "w") as f:
        f.write("real\n" if real else "standin\n")
    if real:
        argv = [sys.executable, os.path.join(HERE, "real_server.py"), "--dir", opts.dir,
                "--deploy", opts.deploy, "--apiserver", apiserver, "--etcd", etcd]
    else:
        argv = [sys.executable, os.path.join(HERE, "standin.py"), "--dir", opts.dir,
                "--crds", os.path.join(opts.deploy, "crds"),
                "--bookmark-seconds", opts.bookmark_seconds,
                "--status-write-latency-ms", opts.status_write_latency_ms]
    sys.stdout.flush()
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
