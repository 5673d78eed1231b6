"""berthd's container and its CSI sidecars: berthd accepts its args (`berthd --help` lists
each flag and takes the values), runs privileged with the kubelet directory mounted
Bidirectional and its state on the host; the sidecars reach berthd's socket, run as native
sidecars, and the controller ones act for this node only."""

import os

from .lookups import container, env_value, expand, expect, flag_names, flag_value, \
    help_flags, mount_source, run_berthd
from .rendered import Rendered

SIDECARS = ["node-driver-registrar", "liveness-probe", "csi-provisioner", "csi-resizer",
            "csi-snapshotter"]


class ContainerChecks(Rendered):
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
