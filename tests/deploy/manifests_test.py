#!/usr/bin/env python3
"""The Kubernetes manifests (deploy/kubernetes) render, and say what berthd needs.

Renders deploy/kubernetes, deploy/kubernetes/classes and deploy/kubernetes/monitoring with
`kubectl kustomize`, parses the
YAML with python3-yaml, and checks the objects against each other and against the built
berthd (`berthd --help`; nothing is started). Exit 0 when every check passes, 1 when one
fails, 77 (skipped) when kubectl or python3-yaml is missing.

    manifests_test.py --source-dir DIR --berthd PATH

BERTH_KUBECTL: the kubectl to render with (default: kubectl on PATH); several, separated by
":", must all render the same objects (e.g. kustomize v5 and Debian 12's kubectl 1.20).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

try:
    import yaml
except ImportError:
    yaml = None

SKIPPED = 77
BASE = "deploy/kubernetes"
CLASSES = "deploy/kubernetes/classes"
MONITORING = "deploy/kubernetes/monitoring"

# Kustomization fields that both kustomize v2.0.3 and v5 understand alike.
KUSTOMIZATION_FIELDS = {"apiVersion", "kind", "resources", "namespace", "images", "commonLabels"}
IMAGE_FIELDS = {"name", "newName", "newTag"}

CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "CSIDriver", "StorageClass",
                  "VolumeSnapshotClass", "VolumeAttributesClass"}

SIDECARS = ["node-driver-registrar", "liveness-probe", "csi-provisioner", "csi-resizer",
            "csi-snapshotter"]

# What the pod's service account must be allowed: (API group, resource, verbs, who needs it).
REQUIRED_RBAC = [
    ("", "nodes", "get list watch", "berthd prestop: is the node being drained?"),
    ("storage.k8s.io", "volumeattachments", "get list watch", "berthd prestop: the wait"),
    ("", "persistentvolumes", "get list watch create delete", "external-provisioner"),
    ("", "persistentvolumeclaims", "get list watch update", "external-provisioner"),
    ("storage.k8s.io", "storageclasses", "get list watch", "external-provisioner"),
    ("", "events", "list watch create update patch", "every sidecar"),
    ("storage.k8s.io", "csinodes", "get list watch", "external-provisioner (topology)"),
    ("snapshot.storage.k8s.io", "volumesnapshots", "get list", "external-provisioner"),
    ("snapshot.storage.k8s.io", "volumesnapshotcontents", "get list watch update patch",
     "external-provisioner, csi-snapshotter"),
    ("storage.k8s.io", "volumeattributesclasses", "get list watch",
     "external-provisioner, external-resizer"),
    ("", "persistentvolumes", "patch", "external-resizer"),
    ("", "persistentvolumeclaims/status", "patch", "external-resizer"),
    ("snapshot.storage.k8s.io", "volumesnapshotclasses", "get list watch", "csi-snapshotter"),
    ("snapshot.storage.k8s.io", "volumesnapshotcontents/status", "update patch",
     "csi-snapshotter"),
]


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def expect(cond, message):
    if not cond:
        raise Failure(message)


# -- rendering and lookups --------------------------------------------------------------------

def render(kubectl, directory):
    proc = subprocess.run([kubectl, "kustomize", directory], capture_output=True, text=True,
                          timeout=120)
    if proc.returncode != 0:
        raise Failure(f"`{kubectl} kustomize {directory}` exited {proc.returncode}: "
                      f"{proc.stderr.strip()}")
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc is not None]


def one(objects, kind):
    found = [o for o in objects if o.get("kind") == kind]
    expect(len(found) == 1, f"expected one {kind}, found {len(found)}")
    return found[0]


def container(pod, name):
    for c in pod.get("containers", []) + pod.get("initContainers", []):
        if c.get("name") == name:
            return c
    raise Failure(f"the DaemonSet has no container named {name}")


def flag_names(args):
    """The --flag names in a container's args ("--a=1", "--b", "2" -> ["--a", "--b"])."""
    return [a.split("=", 1)[0] for a in args if a.startswith("--")]


def flag_value(args, name):
    """The value of --name in args, either "--name=V" or "--name", "V"; None when absent."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def env_value(c, name):
    for e in c.get("env", []):
        if e.get("name") == name:
            return e
    return None


def expand(arg, c):
    """Kubernetes' $(VAR) expansion, with a stand-in for values taken from the pod."""
    def sub(m):
        e = env_value(c, m.group(1))
        if e is None:
            return m.group(0)
        return e.get("value", "node-1")
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", sub, arg)


def run_berthd(berthd, args):
    proc = subprocess.run([berthd] + args, capture_output=True, text=True, timeout=10,
                          env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    return proc.returncode, proc.stdout + proc.stderr


def help_flags(text):
    return set(re.findall(r"^\s+(--[a-z0-9-]+)", text, re.M))


def mount_source(pod, c, mount_path):
    """The hostPath behind c's mount at mount_path, and the mount, or (None, None)."""
    for m in c.get("volumeMounts", []):
        if m.get("mountPath") == mount_path:
            for v in pod.get("volumes", []):
                if v.get("name") == m.get("name"):
                    return v.get("hostPath", {}).get("path"), m
    return None, None


def images_in(doc):
    """Every container image named anywhere in one object (containers, initContainers)."""
    found = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                found += [c.get("image") for c in value if isinstance(c, dict)]
            else:
                found += images_in(value)
    elif isinstance(doc, list):
        for item in doc:
            found += images_in(item)
    return found


# What listens in the pod's network namespace. berthd's metrics endpoint serves these
# paths; its --metrics-address defaults to 127.0.0.1:9808 (read from `berthd --help` when
# it says). The CSI sidecars listen only where a flag says so, except the livenessprobe
# sidecar, whose --health-port defaults to 9808.
BERTHD_PATHS = {"/metrics", "/healthz", "/readyz"}
BERTHD_METRICS_DEFAULT = "127.0.0.1:9808"
SIDECAR_PATHS = {"liveness-probe": {"/healthz"}}
SIDECAR_DEFAULT_PORTS = {"liveness-probe": 9808}
SIDECAR_LISTEN_FLAGS = ("--health-port", "--http-endpoint", "--metrics-address")


def address_port(address, where):
    """The port of HOST:PORT (or :PORT, [V6]:PORT, or a bare port) as an int."""
    port = address.rsplit(":", 1)[-1]
    expect(port.isdigit() and 0 < int(port) < 65536, f"{where}: {address!r} names no port "
           "between 1 and 65535")
    return int(port)


def address_host(address):
    return address.rsplit(":", 1)[0].strip("[]") if ":" in address else ""


def probes(c):
    """(kind, probe) for each of c's liveness, readiness and startup probes."""
    return [(k, c[k]) for k in ("livenessProbe", "readinessProbe", "startupProbe") if k in c]


def probe_port(c, probe, where):
    """The port number an httpGet probe of container c calls (a name is c's own port)."""
    port = probe.get("httpGet", {}).get("port")
    if isinstance(port, int):
        return port
    for p in c.get("ports", []):
        if p.get("name") == port:
            return p["containerPort"]
    raise Failure(f"{where} names port {port!r}, which is not one of {c['name']}'s ports "
                  "(kubelet looks a probe's named port up in its own container)")


# -- the checks -------------------------------------------------------------------------------

class Suite:
    def __init__(self, opts):
        self.src = opts.source_dir
        self.berthd = opts.berthd
        self.kubectls = opts.kubectls
        self.base = []
        self.classes = []
        self.monitoring = []
        self.help = ""

    def setup(self):
        self.base = render(self.kubectls[0], os.path.join(self.src, BASE))
        self.classes = render(self.kubectls[0], os.path.join(self.src, CLASSES))
        self.monitoring = render(self.kubectls[0], os.path.join(self.src, MONITORING))
        code, self.help = run_berthd(self.berthd, ["--help"])
        expect(code == 0, f"`berthd --help` exited {code}: {self.help}")
        self.ds = one(self.base, "DaemonSet")
        self.pod = self.ds["spec"]["template"]["spec"]
        self.berthd_c = container(self.pod, "berthd")
        self.args = self.berthd_c.get("args", [])
        self.driver = flag_value(self.args, "--csi-driver-name") or "berth.csi.dev"

    def kustomization(self, directory):
        with open(os.path.join(self.src, directory, "kustomization.yaml")) as f:
            return yaml.safe_load(f)

    def resource_docs(self, directory):
        docs = []
        for res in self.kustomization(directory).get("resources", []):
            path = os.path.join(self.src, directory, res)
            expect(os.path.isfile(path), f"{directory}: resource {res} is not a file")
            with open(path) as f:
                docs += [(res, d) for d in yaml.safe_load_all(f) if d is not None]
        return docs

    def test_every_object_is_named(self):
        for o in self.base + self.classes + self.monitoring:
            where = f"{o.get('kind')} {o.get('metadata', {}).get('name')}"
            for field in ("kind", "apiVersion"):
                expect(isinstance(o.get(field), str) and o[field], f"{where}: no {field}")
            name = o.get("metadata", {}).get("name")
            expect(isinstance(name, str) and name, f"an object of kind {o.get('kind')} "
                   "has no metadata.name")

    def test_renders_alike_with_every_kubectl(self):
        if len(self.kubectls) < 2:
            raise Skip("one kubectl given (BERTH_KUBECTL=a:b compares several)")
        for k in self.kubectls[1:]:
            for directory, first in ((BASE, self.base), (CLASSES, self.classes),
                                     (MONITORING, self.monitoring)):
                other = render(k, os.path.join(self.src, directory))
                expect(other == first, f"{k} renders {directory} differently from "
                       f"{self.kubectls[0]}")

    def test_namespaces(self):
        ns = one(self.base, "Namespace")["metadata"]["name"]
        for o in self.base + self.classes + self.monitoring:
            where = f"{o['kind']} {o['metadata']['name']}"
            got = o["metadata"].get("namespace")
            if o["kind"] in CLUSTER_SCOPED:
                expect(got is None, f"{where} is cluster-scoped but names namespace {got}")
            else:
                expect(got == ns, f"{where} is in namespace {got}, not {ns}")
            for s in o.get("subjects", []):
                if s.get("kind") == "ServiceAccount":
                    expect(s.get("namespace") == ns, f"{where}: subject {s.get('name')} is in "
                           f"namespace {s.get('namespace')}, not {ns}")

    def test_kustomization_fields_old_kustomize_knows(self):
        for directory in (BASE, CLASSES, MONITORING):
            k = self.kustomization(directory)
            extra = set(k) - KUSTOMIZATION_FIELDS
            expect(not extra, f"{directory}/kustomization.yaml uses {sorted(extra)}, which "
                   "kustomize v2.0.3 (kubectl 1.20) does not know alike")
            for image in k.get("images", []):
                extra = set(image) - IMAGE_FIELDS
                expect(not extra, f"{directory}: image {image.get('name')} uses {sorted(extra)}")

    def test_images_pinned_in_one_place(self):
        pins = {i["name"]: i for i in self.kustomization(BASE).get("images", [])}
        for name, pin in pins.items():
            expect(pin.get("newName") and pin.get("newTag"), f"image {name}: newName and "
                   "newTag are both needed")
        for directory in (CLASSES, MONITORING):
            expect(not self.kustomization(directory).get("images"), f"{directory} pins images too")
        used = set()
        for directory in (BASE, CLASSES, MONITORING):
            for res, doc in self.resource_docs(directory):
                for image in images_in(doc):
                    tail = image.rsplit("/", 1)[-1]
                    expect(":" not in tail and "@" not in image, f"{directory}/{res}: image "
                           f"{image} carries a version; pin it in kustomization.yaml images")
                    expect(image in pins, f"{directory}/{res}: image {image} is not in "
                           "kustomization.yaml images")
                    used.add(image)
        expect(used == set(pins), f"kustomization.yaml pins unused images "
               f"{sorted(set(pins) - used)}")
        wanted = {f"{p['newName']}:{p['newTag']}" for p in pins.values()}
        rendered = set(images_in(self.base))
        expect(rendered == wanted, f"rendered images {sorted(rendered)} are not the pinned "
               f"{sorted(wanted)}")

    def test_berthd_accepts_its_args(self):
        known = help_flags(self.help)
        expect("--csi-endpoint" in known, "`berthd --help` lists no --csi-endpoint: "
               f"cannot read its options from {self.help[:200]!r}")
        for name in flag_names(self.args):
            expect(name in known, f"berthd's container passes {name}, which `berthd --help` "
                   "does not list")
        # berthd checks every option before it answers --help: all values must be valid too.
        args = [expand(a, self.berthd_c) for a in self.args]
        code, out = run_berthd(self.berthd, args + ["--help"])
        expect(code == 0, f"berthd refuses its container's args {args}: {out.strip()}")
        for name in ("--csi-endpoint", "--node-id", "--kubelet-dir", "--state-dir"):
            expect(flag_value(self.args, name), f"berthd's container does not pass {name}")
        node = env_value(self.berthd_c, "CSI_NODE_NAME")
        expect(node and node.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
               == "spec.nodeName", "berthd's CSI_NODE_NAME does not come from spec.nodeName")
        expect(flag_value(self.args, "--node-id") == "$(CSI_NODE_NAME)",
               "--node-id is not the node's name ($(CSI_NODE_NAME))")

    def prestop(self):
        hook = self.berthd_c.get("lifecycle", {}).get("preStop", {}).get("exec", {})
        cmd = hook.get("command", [])
        expect(len(cmd) >= 2, f"berthd's preStop is not an exec of berthd prestop: {hook}")
        return cmd

    def test_prestop_runs_the_hook(self):
        cmd = self.prestop()
        binary = self.berthd_c.get("command", ["berthd"])[0]
        expect(os.path.basename(cmd[0]) == "berthd" and cmd[1] == "prestop",
               f"preStop runs {cmd[:2]}, not berthd prestop")
        expect(cmd[0] == binary, f"preStop runs {cmd[0]}, the container runs {binary}")
        deadline = flag_value(cmd, "--deadline-s")
        expect(deadline is not None and deadline.isdigit() and int(deadline) > 0,
               f"preStop gives no positive --deadline-s: {cmd}")

    def test_prestop_flags_are_berthds(self):
        cmd = self.prestop()
        apps = os.path.join(self.src, "apps")
        has_hook = any('"prestop"' in open(os.path.join(d, f), errors="replace").read()
                       for d, _, fs in os.walk(apps) for f in fs if f.endswith(".cpp"))
        if not has_hook:
            raise Skip("apps/ has no prestop subcommand yet; its flags are checked once it has")
        code, out = run_berthd(self.berthd, ["prestop", "--help"])
        expect(code == 0, f"`berthd prestop --help` exited {code}: {out.strip()}")
        known = help_flags(out)
        for name in flag_names(cmd[2:]):
            expect(name in known, f"preStop passes {name}, which `berthd prestop --help` "
                   "does not list")
        # Like berthd, the hook checks every option before it answers --help.
        code, out = run_berthd(self.berthd, cmd[1:] + ["--help"])
        expect(code == 0, f"berthd refuses the preStop args {cmd[1:]}: {out.strip()}")

    def test_prestop_talks_to_this_berthd(self):
        cmd = self.prestop()
        # The hook's defaults are berthd's; where the container changes one, so must the hook.
        for daemon_flag, hook_flag in (("--admin-socket", "--admin-socket"),
                                       ("--csi-driver-name", "--driver-name")):
            m = re.search(re.escape(daemon_flag) + r" [^\n]*\(default ([^)\s]+)\)", self.help)
            expect(m, f"cannot read {daemon_flag}'s default from `berthd --help`")
            daemon = flag_value(self.args, daemon_flag) or m.group(1)
            hook = flag_value(cmd, hook_flag) or m.group(1)
            expect(daemon == hook, f"berthd runs with {daemon_flag} {daemon}, its preStop hook "
                   f"with {hook_flag} {hook}")

    def test_grace_period_exceeds_the_deadline(self):
        deadline = int(flag_value(self.prestop(), "--deadline-s"))
        grace = self.pod.get("terminationGracePeriodSeconds")
        expect(isinstance(grace, int), "the pod sets no terminationGracePeriodSeconds")
        expect(grace > deadline, f"terminationGracePeriodSeconds {grace} is not longer than "
               f"--deadline-s {deadline}")
        # After the hook, SIGTERM: berthd may wait --stop-timeout-ms for in-flight requests.
        stop_ms = flag_value(self.args, "--stop-timeout-ms")
        if stop_ms is None:
            m = re.search(r"--stop-timeout-ms N[^\n]*\(default (\d+)\)", self.help)
            expect(m, "cannot read --stop-timeout-ms's default from `berthd --help`")
            stop_ms = m.group(1)
        stop_s = -(-int(stop_ms) // 1000)
        expect(grace >= deadline + stop_s, f"terminationGracePeriodSeconds {grace} leaves "
               f"berthd less than its --stop-timeout-ms ({stop_s} s) after a {deadline} s hook")

    def test_berthd_privileged_with_bidirectional_kubelet_dir(self):
        expect(self.berthd_c.get("securityContext", {}).get("privileged") is True,
               "berthd is not privileged")
        kubelet = flag_value(self.args, "--kubelet-dir")
        host, mount = mount_source(self.pod, self.berthd_c, kubelet)
        expect(host == kubelet, f"berthd has no hostPath mount of {kubelet} at {kubelet}")
        expect(mount.get("mountPropagation") == "Bidirectional",
               f"berthd's mount of {kubelet} is not Bidirectional")
        state = flag_value(self.args, "--state-dir")
        host, _ = mount_source(self.pod, self.berthd_c, state)
        expect(host, f"--state-dir {state} is not a hostPath: the journal would die with the "
               "container")

    def test_sidecars_share_berthds_socket(self):
        endpoint = flag_value(self.args, "--csi-endpoint")
        expect(endpoint.startswith("unix://"), f"--csi-endpoint {endpoint} is not unix://")
        sock = endpoint[len("unix://"):]
        kubelet = flag_value(self.args, "--kubelet-dir")
        plugin_dir = os.path.dirname(sock)
        expect(plugin_dir == f"{kubelet}/plugins/{self.driver}",
               f"the CSI socket {sock} is not in {kubelet}/plugins/{self.driver}/")
        for name in SIDECARS:
            c = container(self.pod, name)
            address = flag_value(c.get("args", []), "--csi-address")
            expect(address, f"{name} has no --csi-address")
            host, _ = mount_source(self.pod, c, os.path.dirname(address))
            expect(host == plugin_dir and os.path.basename(address) == os.path.basename(sock),
                   f"{name}'s --csi-address {address} is not berthd's socket {sock}")
        reg = flag_value(container(self.pod, "node-driver-registrar").get("args", []),
                         "--kubelet-registration-path")
        expect(reg == sock, f"the registrar tells kubelet {reg}, berthd listens on {sock}")

    def test_sidecars_outlive_berthd(self):
        names = [c["name"] for c in self.pod.get("containers", [])]
        expect(names == ["berthd"], f"regular containers {names}: only berthd should be one")
        for c in self.pod.get("initContainers", []):
            expect(c.get("restartPolicy") == "Always", f"{c['name']} is a plain init "
                   "container, not a native sidecar (restartPolicy: Always)")
        for name in SIDECARS:
            container(self.pod, name)

    def test_controller_sidecars_are_node_local(self):
        for name in ("csi-provisioner", "csi-snapshotter"):
            c = container(self.pod, name)
            expect(flag_value(c["args"], "--node-deployment") == "true",
                   f"{name} does not run with --node-deployment=true")
            e = env_value(c, "NODE_NAME")
            expect(e and e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
                   == "spec.nodeName", f"{name}'s NODE_NAME does not come from spec.nodeName")
        for name in ("csi-provisioner", "csi-resizer", "csi-snapshotter"):
            args = container(self.pod, name)["args"]
            expect(flag_value(args, "--leader-election") == "false", f"{name} must not elect "
                   "one leader for the cluster (--leader-election=false)")
        for name in ("csi-provisioner", "csi-resizer"):
            gates = flag_value(container(self.pod, name)["args"], "--feature-gates") or ""
            expect("VolumeAttributesClass=true" in gates.split(","),
                   f"{name} lacks --feature-gates=VolumeAttributesClass=true")

    def test_rbac(self):
        ns = self.ds["metadata"]["namespace"]
        sa = self.pod.get("serviceAccountName")
        expect(any(o["kind"] == "ServiceAccount" and o["metadata"]["name"] == sa
                   and o["metadata"].get("namespace") == ns for o in self.base),
               f"no ServiceAccount {ns}/{sa}")
        roles = {o["metadata"]["name"]: o for o in self.base if o["kind"] == "ClusterRole"}
        rules = []
        for b in (o for o in self.base if o["kind"] == "ClusterRoleBinding"):
            if any(s.get("kind") == "ServiceAccount" and s.get("name") == sa
                   and s.get("namespace") == ns for s in b.get("subjects", [])):
                ref = b["roleRef"]["name"]
                expect(b["roleRef"].get("kind") == "ClusterRole" and ref in roles,
                       f"ClusterRoleBinding {b['metadata']['name']} binds no known ClusterRole")
                rules += roles[ref].get("rules", [])

        def allowed(group, resource, verb):
            return any((group in r.get("apiGroups", []) or "*" in r.get("apiGroups", []))
                       and (resource in r.get("resources", []) or "*" in r.get("resources", []))
                       and (verb in r.get("verbs", []) or "*" in r.get("verbs", []))
                       for r in rules)
        for group, resource, verbs, who in REQUIRED_RBAC:
            for verb in verbs.split():
                expect(allowed(group, resource, verb), f"{sa} may not {verb} {resource} "
                       f"({group or 'core'}), which {who} needs")

    def test_csidriver_and_classes(self):
        d = one(self.base, "CSIDriver")
        expect(d["metadata"]["name"] == self.driver, f"CSIDriver {d['metadata']['name']} is "
               f"not berthd's --csi-driver-name {self.driver}")
        expect(d["spec"].get("attachRequired") is False, "CSIDriver: attachRequired must be "
               "false (node-local volumes; the attach/detach controller has nothing to do)")
        expect("Persistent" in d["spec"].get("volumeLifecycleModes", []),
               "CSIDriver: volumeLifecycleModes lacks Persistent")
        sc = one(self.base, "StorageClass")
        expect(sc.get("provisioner") == self.driver, f"StorageClass provisioner "
               f"{sc.get('provisioner')} is not {self.driver}")
        expect(sc.get("allowVolumeExpansion") is True, "StorageClass: no allowVolumeExpansion")
        expect(sc.get("volumeBindingMode") == "WaitForFirstConsumer", "StorageClass must wait "
               "for the first consumer: the volume is made on the pod's node")
        params = sc.get("parameters", {})
        expect(params.get("backend") == "block", "StorageClass: backend is not block")
        fs = params.get("csi.storage.k8s.io/fstype") or params.get("fsType")
        expect(fs in ("xfs", "ext4"), f"StorageClass: fs type {fs} is not xfs or ext4")
        vsc = one(self.classes, "VolumeSnapshotClass")
        expect(vsc.get("driver") == self.driver, "VolumeSnapshotClass names another driver")

    def test_volume_attributes_classes_use_the_block_backends_keys(self):
        with open(os.path.join(self.src, "backends/detail/block_parameters.cpp")) as f:
            keys = set(re.findall(r'_key\s*=\s*"([^"]+)"', f.read()))
        expect({"readAheadKB", "directIO"} <= keys, f"block_parameters.cpp names keys {keys}")
        vacs = [o for o in self.classes if o["kind"] == "VolumeAttributesClass"]
        expect(vacs, "no VolumeAttributesClass example")
        for v in vacs:
            where = f"VolumeAttributesClass {v['metadata']['name']}"
            expect(v["apiVersion"] == "storage.k8s.io/v1beta1", f"{where}: {v['apiVersion']}")
            expect(v.get("driverName") == self.driver, f"{where} names another driver")
            params = v.get("parameters", {})
            expect(params and set(params) <= keys, f"{where}: keys {sorted(params)} are not "
                   f"the block backend's mutable keys {sorted(keys)}")
            if "directIO" in params:
                expect(params["directIO"] in ("true", "false"), f"{where}: directIO")
            if "readAheadKB" in params:
                n = params["readAheadKB"]
                expect(n.isdigit() and int(n) <= 65536 and int(n) % 4 == 0,
                       f"{where}: readAheadKB {n} is not 0 to 65536 in 4 KiB pages")


    # -- ports, probes and scraping ------------------------------------------------------------

    def metrics_address(self):
        """berthd's --metrics-address in the pod, or its default."""
        value = flag_value(self.args, "--metrics-address")
        if value is None:
            m = re.search(r"--metrics-address[^\n]*\(default ([^)\s]+)\)", self.help)
            value = m.group(1) if m else BERTHD_METRICS_DEFAULT
        return value

    def listeners(self):
        """{port: (container, paths it serves)} for every TCP listener in the pod, and the
        clashes: (port, first container, second container)."""
        found, clashes = {}, []

        def add(port, name, paths):
            if port in found:
                clashes.append((port, found[port][0], name))
            else:
                found[port] = (name, paths)
        address = self.metrics_address()
        if address:
            add(address_port(address, "berthd --metrics-address"), "berthd", BERTHD_PATHS)
        for c in self.pod.get("containers", []) + self.pod.get("initContainers", []):
            if c["name"] == "berthd":
                continue
            args = c.get("args", [])
            ports = [address_port(flag_value(args, f), f"{c['name']} {f}")
                     for f in SIDECAR_LISTEN_FLAGS if flag_value(args, f) is not None]
            if not ports and c["name"] in SIDECAR_DEFAULT_PORTS:
                ports = [SIDECAR_DEFAULT_PORTS[c["name"]]]
            for port in ports:
                add(port, c["name"], SIDECAR_PATHS.get(c["name"], set()))
        return found, clashes

    def test_no_two_containers_listen_on_one_port(self):
        _, clashes = self.listeners()
        expect(not clashes, "containers of the pod listen on one port (they share the pod's "
               "network namespace, the second fails to bind): " +
               ", ".join(f"{p}: {a} and {b}" for p, a, b in clashes))

    def test_declared_ports_are_unique_and_listened_on(self):
        found, _ = self.listeners()
        numbers, names = {}, {}
        for c in self.pod.get("containers", []) + self.pod.get("initContainers", []):
            for p in c.get("ports", []):
                n, name = p.get("containerPort"), p.get("name")
                expect(n not in numbers, f"containerPort {n} is declared by {numbers.get(n)} "
                       f"and {c['name']}")
                numbers[n] = c["name"]
                if name:
                    expect(len(name) <= 15 and name not in names, f"port name {name!r} of "
                           f"{c['name']} is longer than 15 or also {names.get(name)}'s")
                    names[name] = c["name"]
                expect(n in found, f"{c['name']} declares port {n} ({name}), on which nothing "
                       f"in the pod listens (listeners: {sorted(found)})")

    def test_metrics_endpoint_is_reachable(self):
        address = self.metrics_address()
        expect(address, "berthd's --metrics-address is empty: no /metrics, /readyz or "
               "/healthz in the pod")
        host = address_host(address)
        expect(host in ("0.0.0.0", "::", "") or host.startswith("$("),
               f"berthd --metrics-address {address} is not reachable from outside the "
               "container (kubelet's probes and Prometheus call the pod's IP): use "
               "0.0.0.0:PORT")
        port = address_port(address, "berthd --metrics-address")
        named = [p for p in self.berthd_c.get("ports", []) if p.get("name") == "metrics"]
        expect(named and named[0].get("containerPort") == port, f"berthd has no port named "
               f"metrics with containerPort {port} (its --metrics-address)")

    def test_scrape_annotations_name_berthds_metrics_port(self):
        notes = self.ds["spec"]["template"].get("metadata", {}).get("annotations", {})
        expect(notes.get("prometheus.io/scrape") == "true",
               "the pod template lacks the annotation prometheus.io/scrape: \"true\"")
        port = notes.get("prometheus.io/port")
        expect(isinstance(port, str) and port.isdigit(), f"prometheus.io/port {port!r} is not "
               "a port number in a string")
        want = address_port(self.metrics_address(), "berthd --metrics-address")
        expect(int(port) == want, f"prometheus.io/port {port} is not berthd's "
               f"--metrics-address port {want}")
        declared = {p.get("name"): p.get("containerPort") for p in self.berthd_c.get("ports", [])}
        expect(declared.get("metrics") == int(port), f"prometheus.io/port {port} is not "
               f"berthd's metrics containerPort {declared.get('metrics')}")
        path = notes.get("prometheus.io/path", "/metrics")
        expect(path == "/metrics", f"prometheus.io/path {path} is not /metrics")

    def test_probes_call_a_listener_and_a_path_it_serves(self):
        found, _ = self.listeners()
        for c in self.pod.get("containers", []) + self.pod.get("initContainers", []):
            for kind, probe in probes(c):
                where = f"{c['name']}'s {kind}"
                if "httpGet" not in probe:
                    continue
                port = probe_port(c, probe, where)
                expect(port in found, f"{where} calls port {port}, on which nothing in the pod "
                       f"listens (listeners: {sorted(found)})")
                owner, paths = found[port]
                path = probe["httpGet"].get("path", "/")
                expect(path in paths, f"{where} calls {path} on port {port}, which {owner} "
                       f"serves only {sorted(paths)}")

    def test_berthd_readiness_is_its_readyz(self):
        probe = self.berthd_c.get("readinessProbe", {})
        where = "berthd's readinessProbe"
        expect(probe.get("httpGet", {}).get("path") == "/readyz", f"{where} is not an httpGet "
               f"of /readyz: {probe}")
        want = address_port(self.metrics_address(), "berthd --metrics-address")
        got = probe_port(self.berthd_c, probe, where)
        expect(got == want, f"{where} calls port {got}, berthd serves /readyz on {want}")

    def test_service_monitor_example_scrapes_berthd(self):
        expect(MONITORING.rsplit("/", 1)[-1] + "/" not in
               [r.rstrip("/") + "/" for r in self.kustomization(BASE).get("resources", [])],
               f"the base lists {MONITORING}: its CRD may not exist on the cluster")
        expect(not [o for o in self.base if o["kind"] == "ServiceMonitor"],
               "the base renders a ServiceMonitor: its CRD may not exist on the cluster")
        sm = one(self.monitoring, "ServiceMonitor")
        svc = one(self.monitoring, "Service")
        expect(sm["apiVersion"] == "monitoring.coreos.com/v1", f"ServiceMonitor "
               f"{sm['apiVersion']}")
        pod_labels = self.ds["spec"]["template"]["metadata"]["labels"]
        selector = svc["spec"].get("selector", {})
        expect(selector and all(pod_labels.get(k) == v for k, v in selector.items()),
               f"Service {svc['metadata']['name']} selects {selector}, not the berth-node pods")
        match = sm["spec"].get("selector", {}).get("matchLabels", {})
        labels = svc["metadata"].get("labels", {})
        expect(match and all(labels.get(k) == v for k, v in match.items()),
               f"the ServiceMonitor selects {match}, the Service is labelled {labels}")
        names = sm["spec"].get("namespaceSelector", {}).get("matchNames",
                                                            [sm["metadata"]["namespace"]])
        expect(svc["metadata"]["namespace"] in names, "the ServiceMonitor does not look in "
               f"the Service's namespace {svc['metadata']['namespace']}")
        want = address_port(self.metrics_address(), "berthd --metrics-address")
        ports = {p.get("name"): p for p in svc["spec"].get("ports", [])}
        for e in sm["spec"].get("endpoints", []):
            expect(e.get("port") in ports, f"the ServiceMonitor scrapes port {e.get('port')}, "
                   f"which the Service does not name ({sorted(ports)})")
            target = ports[e["port"]].get("targetPort", ports[e["port"]].get("port"))
            if isinstance(target, str):
                declared = {p.get("name"): p.get("containerPort")
                            for p in self.berthd_c.get("ports", [])}
                expect(target in declared, f"the Service's targetPort {target} is not a port "
                       "of berthd")
                target = declared[target]
            expect(target == want, f"the ServiceMonitor reaches port {target}, berthd serves "
                   f"/metrics on {want}")
            expect(e.get("path", "/metrics") == "/metrics", f"the ServiceMonitor scrapes "
                   f"{e.get('path')}, not /metrics")
        expect(sm["spec"].get("endpoints"), "the ServiceMonitor has no endpoints")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--source-dir", required=True)
    p.add_argument("--berthd", required=True)
    opts = p.parse_args()
    opts.kubectls = [k for k in os.environ.get("BERTH_KUBECTL", "kubectl").split(":") if k]
    if yaml is None:
        print("SKIP: python3-yaml is missing (scripts/install-deps.sh --test installs it)")
        return SKIPPED
    missing = [k for k in opts.kubectls if shutil.which(k) is None]
    if missing:
        print(f"SKIP: {', '.join(missing)} not found: the manifests cannot be rendered "
              "(scripts/install-deps.sh --test installs kubernetes-client)")
        return SKIPPED
    if not os.access(opts.berthd, os.X_OK):
        print(f"FAIL: berthd {opts.berthd} is not an executable")
        return 1

    suite = Suite(opts)
    try:
        suite.setup()
    except Failure as e:
        print(f"FAIL - setup: {e}")
        return 1
    passed = failed = skipped = 0
    for name in sorted(n for n in dir(suite) if n.startswith("test_")):
        try:
            getattr(suite, name)()
            print(f"ok - {name}")
            passed += 1
        except Skip as e:
            print(f"SKIP - {name}: {e}")
            skipped += 1
        except (Failure, KeyError, TypeError, AttributeError) as e:
            print(f"FAIL - {name}: {type(e).__name__ + ' ' if not isinstance(e, Failure) else ''}"
                  f"{e}")
            failed += 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
