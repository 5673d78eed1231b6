#!/usr/bin/env python3
"""A real Kubernetes API server for the cluster tests: the kube-apiserver and etcd binaries a
developer names (api_server.py passes $BERTH_KUBE_APISERVER and $BERTH_ETCD; neither is
built or shipped by the project), both on loopback, RBAC on, and berth's own manifests
applied: the CRDs (waited for until Established), the namespace, the ServiceAccounts and
their RBAC from deploy/kubernetes.

    real_server.py --dir DIR --deploy deploy/kubernetes --apiserver PATH --etcd PATH

Writes into DIR: kubeconfig (an administrator, group system:masters, through a static token),
kubeconfig-controller and kubeconfig-node (the ServiceAccounts berth-controller and
berth-node, with tokens the server minted through the TokenRequest API, so RBAC holds each
to its role), audit.log (every request at level Metadata: who, what, the answer's code),
etcd.log and apiserver.log, and port last. Stops both at SIGTERM or SIGINT, and when
either of them ends.
"""

import argparse
import json
import os
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import yaml  # noqa: E402

from standin.files import kubeconfig, write_atomically  # noqa: E402
from standin.tls import make_certs, openssl  # noqa: E402

NAMESPACE = "berth-system"
ISSUER = "https://kubernetes.default.svc"
# Where each kind of berth's manifests is created; every other kind is left out.
PATHS = {
    "CustomResourceDefinition": "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    "Namespace": "/api/v1/namespaces",
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
}
MANIFESTS = ("crds/berthvolumes.yaml", "crds/berthsnapshots.yaml", "namespace.yaml", "rbac.yaml")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Api:
    """The few calls the set-up needs, as the administrator."""

    def __init__(self, server, ca, token):
        self.server = server
        self.token = token
        self.tls = ssl.create_default_context(cafile=ca)

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
            "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, context=self.tls, timeout=10) as r:
                code, raw = r.status, r.read()
        except urllib.error.HTTPError as e:
            code, raw = e.code, e.read()
        try:
            return code, json.loads(raw or b"null")
        except ValueError:
            return code, raw.decode(errors="replace")  # /readyz answers text


def start(argv, log):
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def wait(what, ready, procs, limit=120):
    deadline = time.monotonic() + limit
    while not ready():
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"{what}: {p.args[0]} ended with {p.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not after {limit} s")
        time.sleep(0.25)


def apply_manifests(api, deploy):
    """Creates the objects of MANIFESTS; returns the CRDs among them."""
    crds = []
    for rel in MANIFESTS:
        with open(os.path.join(deploy, rel)) as f:
            for doc in yaml.safe_load_all(f):
                if not doc or doc.get("kind") not in PATHS:
                    continue
                ns = doc["metadata"].get("namespace", NAMESPACE)
                code, got = api.call("POST", PATHS[doc["kind"]].format(ns=ns), doc)
                if code not in (200, 201, 409):
                    raise RuntimeError(f"{rel}: {doc['kind']} {doc['metadata']['name']}: {code} "
                                       f"{got}")
                if doc["kind"] == "CustomResourceDefinition":
                    crds.append(doc)
    return crds


def warm_up(api, crd_doc):
    """Writes and deletes one object of the CRD's kind. kube-apiserver v1.32.13 takes about
    2 s over the first create of a custom resource's kind (0.004 s for the next), which a
    test's short deadline would take for berth's own slowness."""
    spec = crd_doc["spec"]
    path = f"/apis/{spec['group']}/{spec['versions'][0]['name']}/{spec['names']['plural']}"
    body = {"apiVersion": f"{spec['group']}/{spec['versions'][0]['name']}",
            "kind": spec["names"]["kind"], "metadata": {"name": "warm-up"},
            "spec": {"name": "warm-up", "nodeName": "warm-up", "sourceVolume": "warm-up"}}
    code, got = api.call("POST", path, body)
    if code != 201:
        raise RuntimeError(f"warm-up create of {spec['names']['kind']}: {code} {got}")
    api.call("DELETE", f"{path}/warm-up")


def established(api, crd):
    code, got = api.call("GET", f"{PATHS['CustomResourceDefinition']}/{crd}")
    conditions = (got or {}).get("status", {}).get("conditions", []) if code == 200 else []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def mint_token(api, account):
    """A token of the ServiceAccount, from the TokenRequest API (what kubelet mounts in a pod)."""
    code, got = api.call("POST", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{account}/token",
                         {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                          "spec": {"audiences": [ISSUER], "expirationSeconds": 86400}})
    if code != 201:
        raise RuntimeError(f"TokenRequest for {account}: {code} {got}")
    return got["status"]["token"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", required=True)
    p.add_argument("--deploy", required=True)
    p.add_argument("--apiserver", required=True)
    p.add_argument("--etcd", required=True)
    opts = p.parse_args()
    directory = os.path.abspath(opts.dir)
    os.makedirs(directory, exist_ok=True)
    ca, cert, key = make_certs(directory)
    openssl("genrsa", "-out", "sa.key", "2048", cwd=directory)
    openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=directory)
    admin = secrets.token_hex(24)
    with open(os.path.join(directory, "tokens.csv"), "w") as f:
        f.write(f'{admin},admin,admin-uid,"system:masters"\n')
    with open(os.path.join(directory, "audit-policy.yaml"), "w") as f:
        f.write("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n")

    client, peer, port = free_port(), free_port(), free_port()
    etcd_url = f"http://127.0.0.1:{client}"
    procs = []

    def stop(*_, code=0):
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
        sys.exit(code)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        procs.append(start([
            opts.etcd, "--name", "berth-test", "--data-dir", os.path.join(directory, "etcd"),
            "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
            "--listen-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-cluster", f"berth-test=http://127.0.0.1:{peer}",
            "--logger", "zap", "--log-outputs", "stderr"],
            open(os.path.join(directory, "etcd.log"), "w")))

        def etcd_healthy():
            try:
                with urllib.request.urlopen(etcd_url + "/health", timeout=2) as r:
                    return json.loads(r.read()).get("health") == "true"
            except OSError:
                return False

        wait("etcd", etcd_healthy, procs)
        # --endpoint-reconciler-type none: the reconciler refuses the loopback address for the
        # kubernetes Service's endpoints and would say so every 10 s; nothing here uses them.
        procs.append(start([
            opts.apiserver, "--etcd-servers", etcd_url, "--bind-address", "127.0.0.1",
            "--secure-port", str(port), "--advertise-address", "127.0.0.1",
            "--tls-cert-file", cert, "--tls-private-key-file", key,
            "--authorization-mode", "Node,RBAC",
            "--token-auth-file", os.path.join(directory, "tokens.csv"),
            "--service-account-issuer", ISSUER,
            "--service-account-key-file", os.path.join(directory, "sa.pub"),
            "--service-account-signing-key-file", os.path.join(directory, "sa.key"),
            "--service-cluster-ip-range", "10.96.0.0/16",
            "--audit-policy-file", os.path.join(directory, "audit-policy.yaml"),
            "--audit-log-path", os.path.join(directory, "audit.log"),
            "--profiling=false", "--endpoint-reconciler-type", "none"],
            open(os.path.join(directory, "apiserver.log"), "w")))
        server = f"https://127.0.0.1:{port}"
        api = Api(server, ca, admin)

        def ready():
            try:
                return api.call("GET", "/readyz")[0] == 200
            except (OSError, ValueError):
                return False

        wait("kube-apiserver /readyz", ready, procs)
        for crd in apply_manifests(api, opts.deploy):
            name = crd["metadata"]["name"]
            wait(f"CRD {name} Established", lambda: established(api, name), procs)
            warm_up(api, crd)
        write_atomically(os.path.join(directory, "kubeconfig"),
                         kubeconfig("real", server, ca, "admin", admin))
        for role in ("controller", "node"):
            write_atomically(os.path.join(directory, f"kubeconfig-{role}"),
                             kubeconfig("real", server, ca, f"berth-{role}",
                                        mint_token(api, f"berth-{role}")))
        write_atomically(os.path.join(directory, "port"), f"{port}\n")
        sys.stderr.write(f"real_server: kube-apiserver on {server}, etcd on {etcd_url} "
                         f"({directory})\n")
        sys.stderr.flush()
        while all(proc.poll() is None for proc in procs):
            time.sleep(0.5)
        sys.stderr.write("real_server: etcd or kube-apiserver ended; stopping\n")
    except Exception as e:  # noqa: BLE001 (any failure: say it, stop both)
        sys.stderr.write(f"real_server: {e}\n")
    stop(code=1)


if __name__ == "__main__":
    main()
