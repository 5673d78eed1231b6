"""The CustomResourceDefinitions (deploy/kubernetes/crds): both render, in berth's group,
cluster-scoped, with the names berthd and kubectl use, a status subresource, a structural
schema (every node typed), CEL rules on the immutable fields, and printer columns that name
fields of that schema."""

import re

from .lookups import expect
from .rendered import Rendered

GROUP = "berth.csi.dev"
VERSION = "v1alpha1"
# kind -> (plural, singular, shortNames)
NAMES = {
    "BerthVolume": ("berthvolumes", "berthvolume", ["bvol"]),
    "BerthSnapshot": ("berthsnapshots", "berthsnapshot", ["bsnap"]),
}
# The fields of every object the API server fills itself; a printer column may name them.
OBJECT_META = {"creationTimestamp", "name", "uid", "generation", "resourceVersion", "labels",
               "annotations", "deletionTimestamp", "finalizers"}
# kind -> the spec fields the API server must keep as created (docs/kubernetes-api.md).
IMMUTABLE = {
    "BerthVolume": ["spec.name", "spec.nodeName", "spec.source", "spec.capability"],
    "BerthSnapshot": ["spec"],
}


def cel_rules(schema, path=""):
    """Field path -> the rule texts of its x-kubernetes-validations, for every field that has any."""
    found = {}
    rules = [r.get("rule") for r in schema.get("x-kubernetes-validations") or []]
    if rules:
        found[path] = rules
    for name, sub in (schema.get("properties") or {}).items():
        found.update(cel_rules(sub, f"{path}.{name}" if path else name))
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found.update(cel_rules(schema[key], f"{path}.{key}"))
    return found


def untyped_nodes(schema, path="openAPIV3Schema"):
    """The paths of the schema nodes without a type: a structural schema has none."""
    found = [] if isinstance(schema.get("type"), str) else [path]
    for name, sub in (schema.get("properties") or {}).items():
        found += untyped_nodes(sub, f"{path}.properties.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += untyped_nodes(schema[key], f"{path}.{key}")
    return found


def resolves(schema, json_path):
    """Whether a printer column's jsonPath (.a.b.c, or .a[?(@.f=="v")].b into a list of
    objects that have f) names a field of the schema."""
    parts = re.findall(r'\w+(?:\[\?\(@\.\w+=="[^"]*"\)\])?', json_path)
    if parts[0] == "metadata" and len(parts) == 2:
        return parts[1] in OBJECT_META
    node = schema
    for part in parts:
        filtered = re.match(r'^(\w+)\[\?\(@\.(\w+)=="[^"]*"\)\]$', part)
        node = (node.get("properties") or {}).get(filtered.group(1) if filtered else part)
        if node is None:
            return False
        if filtered:
            node = node.get("items") if node.get("type") == "array" else None
            if not isinstance(node, dict) or filtered.group(2) not in (node.get("properties") or {}):
                return False
    return True


class CrdChecks(Rendered):
    def crds(self):
        found = {}
        for o in self.base:
            if o.get("kind") == "CustomResourceDefinition":
                found[o["spec"]["names"]["kind"]] = o
        return found

    def test_crds_render_in_berths_group_with_their_names(self):
        crds = self.crds()
        expect(set(crds) == set(NAMES), f"the CRDs rendered are for {sorted(crds)}, not "
               f"{sorted(NAMES)}")
        for kind, (plural, singular, short) in NAMES.items():
            spec = crds[kind]["spec"]
            names = spec["names"]
            expect(spec.get("group") == GROUP, f"{kind}: group {spec.get('group')}, not {GROUP}")
            expect(crds[kind]["metadata"]["name"] == f"{plural}.{GROUP}", f"{kind}: the CRD is "
                   f"named {crds[kind]['metadata']['name']}, not {plural}.{GROUP}")
            got = (names.get("plural"), names.get("singular"), names.get("shortNames"))
            expect(got == (plural, singular, short), f"{kind}: names {got}, not "
                   f"{(plural, singular, short)}")
            expect(spec.get("scope") == "Cluster", f"{kind} is {spec.get('scope')}-scoped, not "
                   "cluster-scoped")

    def test_crds_serve_and_store_one_version_with_a_status_subresource(self):
        for kind, crd in self.crds().items():
            versions = crd["spec"]["versions"]
            expect([v["name"] for v in versions] == [VERSION], f"{kind}: versions "
                   f"{[v['name'] for v in versions]}, not [{VERSION}]")
            v = versions[0]
            expect(v.get("served") is True and v.get("storage") is True, f"{kind} {VERSION} is "
                   "not both served and the storage version")
            expect(v.get("subresources", {}).get("status") == {}, f"{kind}: no status "
                   "subresource, so a spec writer could overwrite berthd's status")

    def test_crd_schemas_are_structural(self):
        for kind, crd in self.crds().items():
            schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
            untyped = untyped_nodes(schema)
            expect(not untyped, f"{kind}: schema nodes without a type (not structural, so "
                   f"the API server refuses the CRD): {untyped}")
            for part in ("spec", "status"):
                expect(part in schema.get("properties", {}), f"{kind}: the schema has no {part}")
            # The immutable fields say so as a CEL transition rule, which the API server
            # holds (on by default since Kubernetes 1.25; the node plugin needs 1.29), and no
            # other rule: the stand-in evaluates only this one.
            rules = cel_rules(schema)
            for field in IMMUTABLE[kind]:
                expect(rules.get(field) == ["self == oldSelf"], f"{kind}: {field} is "
                       f"immutable, but its CEL rules are {rules.get(field)}")
            extra = sorted(set(rules) - set(IMMUTABLE[kind]))
            expect(not extra, f"{kind}: CEL rules on {extra}, which nothing here checks")

    def test_crd_printer_columns_name_schema_fields(self):
        for kind, crd in self.crds().items():
            v = crd["spec"]["versions"][0]
            schema = v["schema"]["openAPIV3Schema"]
            columns = v.get("additionalPrinterColumns", [])
            expect(columns, f"{kind}: no printer columns")
            for c in columns:
                expect(resolves(schema, c.get("jsonPath", "")), f"{kind}: column {c.get('name')}'s "
                       f"jsonPath {c.get('jsonPath')} names no field of the schema")
            age = [c for c in columns if c["name"] == "Age"]
            expect(age and age[0]["type"] == "date", f"{kind}: no Age column of type date")
