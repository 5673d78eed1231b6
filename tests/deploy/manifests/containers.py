"""berthd's containers and their CSI sidecars. On the node: berthd accepts its args (`berthd
--help` lists each flag and takes the values), runs for Kubernetes (--kubernetes), privileged
with the kubelet directory mounted Bidirectional and its state on the host; the registrar and
liveness-probe reach its socket as native sidecars, and no controller sidecar is left there.
In the controller: berthd runs `berthd controller` with flags that command lists, keeps
nothing on the host, serves the driver the CSIDriver names; the provisioner, resizer and
snapshotter reach its socket, each elects a leader in the pod's namespace, and the provisioner
publishes capacity per node with the env and owner level that needs. The csi-snapshotter runs
once, in the controller, and on no node."""

import os
import re

from .lookups import container, env_value, expand, expect, flag_names, flag_on, flag_value, \
    help_flags, mount_source, mount_volume, run_berthd
from .rendered import Rendered

# The node plugin's sidecars, and the controller's: the ones that act on the API for the
# driver (each elected), and the liveness-probe beside its berthd.
SIDECARS = ["node-driver-registrar", "liveness-probe"]
CONTROLLER_SIDECARS = ["csi-provisioner", "csi-resizer", "csi-snapshotter"]
CONTROLLER_PROBE = "liveness-probe"
# The images of the sidecars that belong to the controller (kustomization.yaml's names).
CONTROLLER_IMAGES = {"csi-provisioner", "csi-resizer", "csi-snapshotter", "csi-attacher"}


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

    def test_berthd_runs_for_kubernetes(self):
        # Cluster mode: berthd serves Identity and Node and carries out its node's BerthVolumes;
        # without the flag it would serve Controller too, for nobody.
        expect("--kubernetes" in self.args, "the node's berthd does not pass --kubernetes: it "
               "would not carry out the BerthVolumes the controller writes for its node")

    def test_no_controller_sidecar_on_the_node(self):
        for c in self.pod.get("containers", []) + self.pod.get("initContainers", []):
            image = str(c.get("image", "")).rsplit("/", 1)[-1].split(":", 1)[0]
            expect(c["name"] not in CONTROLLER_SIDECARS and image not in CONTROLLER_IMAGES,
                   f"the DaemonSet still runs {c['name']} ({c.get('image')}): on every node it "
                   "would act on every claim of the driver; it belongs to the controller")
            expect(not flag_on(c.get("args", []), "--node-deployment"), f"{c['name']} runs "
                   "with --node-deployment in the DaemonSet")

    def test_snapshotter_runs_once_in_the_controller(self):
        # berthd controller serves CreateSnapshot for every node (a BerthSnapshot on the source
        # volume's node), so exactly one csi-snapshotter runs: in the controller Deployment,
        # elected, on the provisioner's socket (test_controller_sidecars_elect_a_leader and
        # test_controller_sidecars_share_its_socket check the rest). On a node it would act
        # for every node's snapshots. Every pod template of the base, both workloads.
        workloads = [o for o in self.base
                     if isinstance(o.get("spec", {}).get("template", {}).get("spec"), dict)]
        kinds = {o["kind"] for o in workloads}
        expect({"Deployment", "DaemonSet"} <= kinds, f"the base renders workloads {sorted(kinds)}"
               ", not the controller Deployment and the node DaemonSet")
        found = []
        for o in workloads:
            pod = o["spec"]["template"]["spec"]
            for c in pod.get("containers", []) + pod.get("initContainers", []):
                image = str(c.get("image", "")).split("@", 1)[0].rsplit("/", 1)[-1]
                image = image.split(":", 1)[0]
                if c.get("name") == "csi-snapshotter" or image == "csi-snapshotter":
                    found.append((o, c, image))
        where = [f"{o['kind']} {o['metadata']['name']}: {c.get('name')} ({c.get('image')})"
                 for o, c, _ in found]
        expect(len(found) == 1 and found[0][0] is self.deploy, f"csi-snapshotter runs in "
               f"{where or 'no pod'}: it must run once, in the controller Deployment")
        _, c, image = found[0]
        expect(c.get("name") == "csi-snapshotter" and image == "csi-snapshotter",
               f"the controller's snapshotter is {c.get('name')} ({c.get('image')}): the "
               "container and its image are both named csi-snapshotter")
        expect(c in self.ctl_pod.get("containers", []), "the controller's csi-snapshotter is "
               "not one of its regular containers")
        prov = flag_value(container(self.ctl_pod, "csi-provisioner", "the controller Deployment")
                          .get("args", []), "--csi-address")
        args = c.get("args", [])
        expect(flag_value(args, "--csi-address") == prov, f"the snapshotter's --csi-address "
               f"{flag_value(args, '--csi-address')} is not the provisioner's {prov}")
        expect(flag_on(args, "--leader-election"), "the controller's csi-snapshotter does not "
               "elect a leader (--leader-election=true): two replicas would both act")

    def test_controller_berthd_accepts_its_args(self):
        expect(self.ctl_args[:1] == ["controller"], f"the controller's berthd runs "
               f"{self.ctl_args[:1]}, not the controller command")
        out = self.controller_help()
        known = help_flags(out)
        expect("--csi-endpoint" in known, "`berthd controller --help` lists no --csi-endpoint: "
               f"cannot read its options from {out[:200]!r}")
        for name in flag_names(self.ctl_args[1:]):
            expect(name in known, f"the controller's berthd passes {name}, which `berthd "
                   "controller --help` does not list")
        # Like berthd, the command checks every option before it answers --help.
        args = [expand(a, self.ctl_c) for a in self.ctl_args]
        code, out = run_berthd(self.berthd, args + ["--help"])
        expect(code == 0, f"berthd refuses the controller's args {args}: {out.strip()}")

    def test_controller_serves_the_nodes_driver(self):
        name = flag_value(self.ctl_args, "--driver-name")
        if name is None:
            m = re.search(r"--driver-name [^\n]*\(default ([^)\s]+)\)", self.controller_help())
            expect(m, "cannot read --driver-name's default from `berthd controller --help`")
            name = m.group(1)
        expect(name == self.driver, f"the controller serves driver {name}, the node plugin "
               f"{self.driver}")

    def test_controller_keeps_nothing_on_the_host(self):
        # Its state is the BerthVolume and BerthSnapshot objects: a host path would tie it to
        # a node, and a privileged container would give it what it never uses.
        for v in self.ctl_pod.get("volumes", []):
            expect("hostPath" not in v, f"the controller mounts a host path "
                   f"{v.get('hostPath', {}).get('path')} (volume {v.get('name')})")
        for c in self.ctl_pod.get("containers", []) + self.ctl_pod.get("initContainers", []):
            expect(not c.get("securityContext", {}).get("privileged"), f"the controller's "
                   f"{c['name']} is privileged")
        expect(not self.ctl_pod.get("hostNetwork"), "the controller runs in the host's network")

    def test_controller_sidecars_share_its_socket(self):
        endpoint = flag_value(self.ctl_args, "--csi-endpoint") or ""
        expect(endpoint.startswith("unix://"), f"the controller's --csi-endpoint {endpoint!r} "
               "is not unix://")
        sock = endpoint[len("unix://"):]
        own = mount_volume(self.ctl_pod, self.ctl_c, os.path.dirname(sock))
        expect(own is not None, f"the controller's berthd mounts no volume at "
               f"{os.path.dirname(sock)}, where its socket is")
        for name in CONTROLLER_SIDECARS + [CONTROLLER_PROBE]:
            c = container(self.ctl_pod, name, "the controller Deployment")
            address = flag_value(c.get("args", []), "--csi-address")
            expect(address, f"the controller's {name} has no --csi-address")
            v = mount_volume(self.ctl_pod, c, os.path.dirname(address))
            expect(v is not None and v.get("name") == own.get("name")
                   and os.path.basename(address) == os.path.basename(sock),
                   f"the controller's {name} --csi-address {address} is not berthd's socket "
                   f"{sock} (volume {own.get('name')})")

    def test_controller_sidecars_elect_a_leader(self):
        ns = self.deploy["metadata"].get("namespace")
        for name in CONTROLLER_SIDECARS:
            args = container(self.ctl_pod, name, "the controller Deployment").get("args", [])
            expect(flag_on(args, "--leader-election"), f"the controller's {name} does not elect "
                   "a leader (--leader-election=true): two replicas would both act")
            expect(not flag_on(args, "--node-deployment"), f"the controller's {name} runs with "
                   "--node-deployment: it would act only for the node it runs on")
            # The Lease is in the pod's namespace unless a flag says otherwise; the Role that
            # allows it (rbac.yaml) is there.
            lease_ns = flag_value(args, "--leader-election-namespace")
            expect(lease_ns in (None, ns), f"the controller's {name} keeps its Lease in "
                   f"{lease_ns}, not in the pod's namespace {ns}")

    def test_provisioner_publishes_capacity(self):
        c = container(self.ctl_pod, "csi-provisioner", "the controller Deployment")
        args = c.get("args", [])
        expect(flag_on(args, "--enable-capacity"), "the provisioner does not publish "
               "CSIStorageCapacity (--enable-capacity): the scheduler would place pods on full "
               "nodes")
        # Pod, ReplicaSet, Deployment: the objects go with the Deployment, not with one pod.
        expect(flag_value(args, "--capacity-ownerref-level") == "2", "the provisioner's "
               "--capacity-ownerref-level is not 2 (the Deployment that owns the pod's "
               "ReplicaSet)")
        for env, path in (("POD_NAME", "metadata.name"), ("NAMESPACE", "metadata.namespace")):
            e = env_value(c, env)
            expect(e and e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == path,
                   f"the provisioner's {env} does not come from {path} (--enable-capacity "
                   "needs it)")
        gates = (flag_value(args, "--feature-gates") or "").split(",")
        expect("Topology=true" in gates, "the provisioner lacks --feature-gates=Topology=true")
        expect(flag_on(args, "--strict-topology"), "the provisioner does not pass "
               "--strict-topology: CreateVolume would offer every node, not the selected one")

    def test_controller_sidecars_modify_volumes(self):
        for name in ("csi-provisioner", "csi-resizer"):
            c = container(self.ctl_pod, name, "the controller Deployment")
            gates = flag_value(c["args"], "--feature-gates") or ""
            expect("VolumeAttributesClass=true" in gates.split(","),
                   f"{name} lacks --feature-gates=VolumeAttributesClass=true")
