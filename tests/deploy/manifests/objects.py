"""Every rendered object: named, in the Namespace unless cluster-scoped, rendered alike by
each kubectl given; the kustomization files use only fields old and new kustomize read
alike; each image is pinned once, in the base's kustomization.yaml."""

import os

from deploy_common import Skip

from .lookups import expect, images_in, one, render, run_berthd
from .rendered import BASE, CLASSES, MONITORING, Rendered

# Kustomization fields that both kustomize v2.0.3 and v5 understand alike.
KUSTOMIZATION_FIELDS = {"apiVersion", "kind", "resources", "namespace", "images", "commonLabels"}
IMAGE_FIELDS = {"name", "newName", "newTag"}

CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "CSIDriver", "StorageClass",
                  "VolumeSnapshotClass", "VolumeAttributesClass", "CustomResourceDefinition"}


class ObjectChecks(Rendered):
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

    def test_berthd_image_is_the_one_image_sh_tags(self):
        # scripts/image.sh tags berth/berthd:VERSION, VERSION from `berthd --version`; a
        # registry of one's own replaces the name, never the version.
        pin = {i["name"]: i for i in self.kustomization(BASE).get("images", [])}.get("berthd", {})
        code, out = run_berthd(self.berthd, ["--version"])
        expect(code == 0, f"`berthd --version` exited {code}: {out}")
        version = out.split()[1] if len(out.split()) > 1 else out
        expect(str(pin.get("newName", "")).endswith("berth/berthd"), f"kustomization.yaml names "
               f"berthd's image {pin.get('newName')}, not berth/berthd (scripts/image.sh's tag)")
        expect(str(pin.get("newTag")) == version, f"kustomization.yaml pins berthd's image at "
               f"{pin.get('newTag')}, but this berthd is {version} (scripts/image.sh tags that)")
