"""What the stand-in serves: the kinds of the CRD files (their schema, status subresource and
printer columns), core Nodes and Events, storage.k8s.io VolumeAttachments (what `berthd
prestop` waits on), and the discovery documents kubectl reads first."""

import glob
import os

import yaml

from .schema import rules_supported

ALL_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]
VERSION_INFO = {"major": "1", "minor": "29", "gitVersion": "v1.29.0-berth-standin",
                "gitCommit": "0000000000000000000000000000000000000000",
                "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
                "goVersion": "go1.21.0", "compiler": "gc", "platform": "linux/amd64"}


class Resource:
    def __init__(self, group, version, plural, singular, kind, namespaced, short_names=(),
                 schema=None, status_subresource=False, columns=(), verbs=ALL_VERBS):
        self.group = group
        self.version = version
        self.plural = plural
        self.singular = singular
        self.kind = kind
        self.namespaced = namespaced
        self.short_names = list(short_names)
        self.schema = schema
        self.status_subresource = status_subresource
        self.columns = list(columns)
        self.verbs = list(verbs)
        self.custom = schema is not None

    @property
    def api_version(self):
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self):
        """As a real server names the resource in its messages: berthvolumes.berth.csi.dev."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def discovery(self):
        entries = [{"name": self.plural, "singularName": self.singular,
                    "namespaced": self.namespaced, "kind": self.kind, "verbs": self.verbs}]
        if self.short_names:
            entries[0]["shortNames"] = self.short_names
        if self.status_subresource:
            entries.append({"name": f"{self.plural}/status", "singularName": "",
                            "namespaced": self.namespaced, "kind": self.kind,
                            "verbs": ["get", "patch", "update"]})
        return entries


def core_resources():
    return [Resource("", "v1", "nodes", "node", "Node", False, ["no"]),
            Resource("", "v1", "events", "event", "Event", True, ["ev"],
                     verbs=["create", "get", "list", "watch"]),
            Resource("storage.k8s.io", "v1", "volumeattachments", "volumeattachment",
                     "VolumeAttachment", False)]


def load_crds(directory):
    """One Resource for the served version of every CustomResourceDefinition in directory."""
    found = []
    for path in sorted(glob.glob(os.path.join(directory, "*.yaml"))):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if not doc or doc.get("kind") != "CustomResourceDefinition":
                    continue
                spec = doc["spec"]
                names = spec["names"]
                for v in spec["versions"]:
                    if not v.get("served"):
                        continue
                    rules_supported(v["schema"]["openAPIV3Schema"],
                                    f"{os.path.basename(path)} {v['name']}")
                    found.append(Resource(
                        spec["group"], v["name"], names["plural"], names["singular"],
                        names["kind"], spec["scope"] == "Namespaced", names.get("shortNames", []),
                        schema=v["schema"]["openAPIV3Schema"],
                        status_subresource="status" in (v.get("subresources") or {}),
                        columns=v.get("additionalPrinterColumns", [])))
    return found


class Registry:
    """Every served resource, found by (group, version, plural)."""

    def __init__(self, resources):
        self.resources = resources
        self.by_path = {(r.group, r.version, r.plural): r for r in resources}

    def find(self, group, version, plural):
        return self.by_path.get((group, version, plural))

    def groups(self):
        seen = {}
        for r in self.resources:
            if r.group:
                seen.setdefault(r.group, [])
                if r.version not in seen[r.group]:
                    seen[r.group].append(r.version)
        return seen

    def api_versions(self, server_address):
        return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}

    def api_group(self, group, versions):
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": gvs,
                "preferredVersion": gvs[0]}

    def api_group_list(self):
        groups = [self.api_group(g, vs) for g, vs in sorted(self.groups().items())]
        for g in groups:
            del g["kind"], g["apiVersion"]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def resource_list(self, group, version):
        entries = []
        for r in self.resources:
            if r.group == group and r.version == version:
                entries += r.discovery()
        if not entries:
            return None
        gv = f"{group}/{version}" if group else version
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                "resources": entries}
