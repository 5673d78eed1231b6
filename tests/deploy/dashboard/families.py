"""The metric families docs/running.md's Metrics table documents, and whether that table
names exactly what protocols/metrics writes: the dashboard's names are checked against the
table, so the table must be the endpoint's."""

import os
import re

from deploy_common import Failure

DOCS = "docs/running.md"


def documented_families(src):
    """{family: (type, {labels})} from the table of docs/running.md's "## Metrics" section."""
    with open(os.path.join(src, DOCS)) as f:
        text = f.read()
    m = re.search(r"^## Metrics\n(.*?)(?=^## )", text + "\n## ", re.M | re.S)
    if not m:
        raise Failure(f"{DOCS} has no \"## Metrics\" section")
    families = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        names = re.findall(r"`([a-z_:][a-z0-9_:]*)`", cells[0])
        kind = cells[1]
        labels = set(re.findall(r"`([a-z_][a-z0-9_]*)`", cells[2]))
        for name in names:
            families[name] = (kind, labels)
    if not families:
        raise Failure(f"{DOCS}'s Metrics section lists no family (| `name` | type | labels |)")
    return families


def family_of(name, families):
    """(family, type, labels) of a series name, or None."""
    if name in families and families[name][0] != "histogram":
        return (name,) + families[name]
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)]
        if name.endswith(suffix) and families.get(base, ("",))[0] == "histogram":
            return (base,) + families[base]
    return None


def check_docs_against_source(src, families):
    """The Metrics table names the families the endpoint writes: the "berth_..." and
    "process_..." literals of protocols/metrics/*.cpp. Returns (problems, notes)."""
    where = os.path.join(src, "protocols", "metrics")
    written = set()
    for name in sorted(os.listdir(where)) if os.path.isdir(where) else []:
        if name.endswith(".cpp"):
            with open(os.path.join(where, name)) as f:
                written |= set(re.findall(r'"((?:berth|process)_[a-z0-9_]+)"', f.read()))
    if not written:
        return [], [f"NOTE: protocols/metrics/*.cpp names no family yet: {DOCS}'s Metrics "
                    "table is not compared with the endpoint"]
    problems = [f"protocols/metrics writes {n}, which {DOCS}'s Metrics table lacks"
                for n in sorted(written - set(families))]
    problems += [f"{DOCS}'s Metrics table lists {n}, which protocols/metrics does not write"
                 for n in sorted(set(families) - written)]
    return problems, []
