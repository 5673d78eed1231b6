"""The cluster-wide objects: the pod's service account may do what berthd prestop and each
sidecar needs; the CSIDriver, StorageClass, VolumeSnapshotClass and VolumeAttributesClasses
name berthd's driver, and the attributes classes use only the block backend's mutable keys."""

import os
import re

from .lookups import expect, one
from .rendered import Rendered

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


class ClusterChecks(Rendered):
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
