"""The cluster-wide objects: each pod's service account may do what its containers need (the
node's: berthd prestop and berthd carrying out its node's objects; the controller's: berthd
controller and each sidecar, the namespaced rules in the pod's namespace) and the node's may
not do what only the controller does, nor the controller what only the node does; every Role
and ClusterRole is bound to an account; the CSIDriver, StorageClass, VolumeSnapshotClass and
VolumeAttributesClasses name berthd's driver, the CSIDriver asks for capacity tracking, and
the attributes classes use only the block backend's mutable keys."""

import os
import re

from .lookups import expect, one
from .rendered import Rendered

# What a service account must be allowed: (API group, resource, verbs, who needs it). A rule
# marked NAMESPACED is needed only in the pod's own namespace (a Role there will do).
NAMESPACED = "namespaced"

NODE_RBAC = [
    ("", "nodes", "get list watch", "berthd prestop: is the node being drained?"),
    ("storage.k8s.io", "volumeattachments", "get list watch", "berthd prestop: the wait"),
    ("", "nodes", "patch", "berthd --kubernetes: its capacity as Node annotations"),
    ("berth.csi.dev", "berthvolumes", "get list watch patch",
     "berthd --kubernetes: its node's volumes, their finalizer"),
    ("berth.csi.dev", "berthvolumes/status", "patch", "berthd --kubernetes"),
    ("berth.csi.dev", "berthsnapshots", "get list watch patch",
     "berthd --kubernetes: its node's snapshots, their finalizer"),
    ("berth.csi.dev", "berthsnapshots/status", "patch", "berthd --kubernetes"),
]

# What only the controller does: the node's account may not, so a node cannot make or drop
# another node's volumes, or provision at all.
NODE_FORBIDDEN = [
    ("berth.csi.dev", "berthvolumes", "create delete"),
    ("berth.csi.dev", "berthsnapshots", "create delete"),
    ("", "persistentvolumes", "create delete patch"),
    # Nor what no part of berthd on a node does: it writes no Events, and the snapshotter's
    # objects are the controller's sidecar's.
    ("", "events", "create patch"),
    ("snapshot.storage.k8s.io", "volumesnapshotcontents", "update patch"),
    ("snapshot.storage.k8s.io", "volumesnapshotcontents/status", "update patch"),
]

# What the controller does not do: the node writes the status of both kinds.
CONTROLLER_FORBIDDEN = [
    ("berth.csi.dev", "berthvolumes/status", "update patch"),
    ("berth.csi.dev", "berthsnapshots/status", "update patch"),
]

CONTROLLER_RBAC = [
    ("berth.csi.dev", "berthvolumes", "get list watch create patch delete",
     "berthd controller"),
    ("berth.csi.dev", "berthsnapshots", "get list watch create patch delete",
     "berthd controller: CreateSnapshot, DeleteSnapshot (the delete-request annotation, the "
     "finalizer of a gone node's snapshot)"),
    ("", "nodes", "get list watch", "berthd controller: topology and capacity"),
    ("", "events", "create patch", "berthd controller"),
    ("", "persistentvolumes", "get list watch create delete", "external-provisioner"),
    ("", "persistentvolumeclaims", "get list watch update", "external-provisioner"),
    ("storage.k8s.io", "storageclasses", "get list watch", "external-provisioner"),
    ("", "events", "list watch create update patch", "every sidecar"),
    ("storage.k8s.io", "csinodes", "get list watch", "external-provisioner (topology)"),
    ("snapshot.storage.k8s.io", "volumesnapshots", "get list", "external-provisioner"),
    ("snapshot.storage.k8s.io", "volumesnapshotcontents", "get list watch",
     "external-provisioner"),
    ("storage.k8s.io", "volumeattributesclasses", "get list watch",
     "external-provisioner, external-resizer"),
    ("", "persistentvolumes", "patch", "external-resizer"),
    ("", "persistentvolumeclaims/status", "patch", "external-resizer"),
    ("snapshot.storage.k8s.io", "volumesnapshotclasses", "get list watch", "csi-snapshotter"),
    ("snapshot.storage.k8s.io", "volumesnapshotcontents", "get list watch update patch",
     "csi-snapshotter"),
    ("snapshot.storage.k8s.io", "volumesnapshotcontents/status", "update patch",
     "csi-snapshotter"),
    ("coordination.k8s.io", "leases", "get watch list delete update create",
     "every sidecar's leader election", NAMESPACED),
    ("storage.k8s.io", "csistoragecapacities", "get list watch create update patch delete",
     "external-provisioner --enable-capacity", NAMESPACED),
    ("", "pods", "get", "external-provisioner --capacity-ownerref-level", NAMESPACED),
    ("apps", "replicasets", "get", "external-provisioner --capacity-ownerref-level",
     NAMESPACED),
    ("apps", "deployments", "get", "external-provisioner --capacity-ownerref-level",
     NAMESPACED),
]


class ClusterChecks(Rendered):
    def rules_of(self, workload):
        """(service account, its namespace, [(rules, namespace or None for cluster-wide)]) for
        the pod of a DaemonSet or Deployment: what its ClusterRoleBindings and the RoleBindings
        in its namespace grant it."""
        ns = workload["metadata"]["namespace"]
        sa = workload["spec"]["template"]["spec"].get("serviceAccountName")
        expect(any(o["kind"] == "ServiceAccount" and o["metadata"]["name"] == sa
                   and o["metadata"].get("namespace") == ns for o in self.base),
               f"no ServiceAccount {ns}/{sa}")
        cluster_roles = {o["metadata"]["name"]: o for o in self.base
                         if o["kind"] == "ClusterRole"}
        roles = {(o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in self.base
                 if o["kind"] == "Role"}
        granted = []
        for b in (o for o in self.base if o["kind"] in ("ClusterRoleBinding", "RoleBinding")):
            if not any(s.get("kind") == "ServiceAccount" and s.get("name") == sa
                       and s.get("namespace") == ns for s in b.get("subjects", [])):
                continue
            where = f"{b['kind']} {b['metadata']['name']}"
            ref = b["roleRef"]
            scope = None if b["kind"] == "ClusterRoleBinding" else b["metadata"].get("namespace")
            if ref.get("kind") == "ClusterRole":
                expect(ref["name"] in cluster_roles, f"{where} binds no known ClusterRole")
                granted.append((cluster_roles[ref["name"]].get("rules", []), scope))
            else:
                expect(b["kind"] == "RoleBinding" and ref.get("kind") == "Role"
                       and (scope, ref["name"]) in roles,
                       f"{where} binds no known Role in its namespace {scope}")
                granted.append((roles[(scope, ref["name"])].get("rules", []), scope))
        return sa, ns, granted

    @staticmethod
    def allowed(granted, group, resource, verb, namespace):
        """Whether a grant covers the verb: cluster-wide, or (namespace given) in it."""
        def covers(r):
            return ((group in r.get("apiGroups", []) or "*" in r.get("apiGroups", []))
                    and (resource in r.get("resources", []) or "*" in r.get("resources", []))
                    and (verb in r.get("verbs", []) or "*" in r.get("verbs", [])))
        return any(scope is None or scope == namespace
                   for rules, scope in granted if any(covers(r) for r in rules))

    def expect_rbac(self, workload, required):
        sa, ns, granted = self.rules_of(workload)
        for rule in required:
            group, resource, verbs, who = rule[:4]
            namespaced = len(rule) > 4 and rule[4] == NAMESPACED
            for verb in verbs.split():
                expect(self.allowed(granted, group, resource, verb, ns if namespaced else None),
                       f"{sa} may not {verb} {resource} ({group or 'core'})"
                       f"{' in ' + ns if namespaced else ''}, which {who} needs")
        return sa, ns, granted

    def test_rbac(self):
        sa, _, granted = self.expect_rbac(self.ds, NODE_RBAC)
        for group, resource, verbs in NODE_FORBIDDEN:
            for verb in verbs.split():
                expect(not self.allowed(granted, group, resource, verb, None),
                       f"{sa} may {verb} {resource} ({group or 'core'}): berthd on a node "
                       "does not, and least privilege says it may not")

    def test_controller_rbac(self):
        sa, _, granted = self.expect_rbac(self.deploy, CONTROLLER_RBAC)
        expect(sa != self.pod.get("serviceAccountName"), f"the controller and the node plugin "
               f"share the service account {sa}: every node could then do what the "
               "controller does")
        for group, resource, verbs in CONTROLLER_FORBIDDEN:
            for verb in verbs.split():
                expect(not self.allowed(granted, group, resource, verb, None),
                       f"{sa} may {verb} {resource} ({group or 'core'}): the node writes it, "
                       "and least privilege says the controller may not")

    def test_every_role_is_bound(self):
        # A role nobody holds grants nothing: a sidecar's rules (the snapshotter's, say) would
        # be in rbac.yaml and still missing. A Role counts as bound in its own namespace only.
        bound = {(b["roleRef"].get("kind"), b["roleRef"].get("name"),
                  b["metadata"].get("namespace") if b["roleRef"].get("kind") == "Role" else None)
                 for b in self.base if b["kind"] in ("ClusterRoleBinding", "RoleBinding")
                 and b.get("subjects")}
        for o in self.base:
            if o["kind"] in ("ClusterRole", "Role"):
                ns = o["metadata"].get("namespace") if o["kind"] == "Role" else None
                expect((o["kind"], o["metadata"]["name"], ns) in bound,
                       f"{o['kind']} {o['metadata']['name']} is bound to no account")

    def test_csidriver_and_classes(self):
        d = one(self.base, "CSIDriver")
        expect(d["metadata"]["name"] == self.driver, f"CSIDriver {d['metadata']['name']} is "
               f"not berthd's --csi-driver-name {self.driver}")
        expect(d["spec"].get("attachRequired") is False, "CSIDriver: attachRequired must be "
               "false (node-local volumes; the attach/detach controller has nothing to do)")
        expect("Persistent" in d["spec"].get("volumeLifecycleModes", []),
               "CSIDriver: volumeLifecycleModes lacks Persistent")
        expect(d["spec"].get("storageCapacity") is True, "CSIDriver: storageCapacity is not "
               "true: the scheduler would ignore the capacity the provisioner publishes")
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
