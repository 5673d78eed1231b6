"""The dashboard's shape: a current schema, a uid and title, the datasource and instance
variables, integer panel ids that do not repeat, panels within the 24 columns that do not
overlap, and for every panel targets with an expr on the ${datasource} variable."""

import re

from .expressions import all_panels

DATASOURCE_UIDS = {"${datasource}", "$datasource"}


def check_structure(dash):
    """The dashboard's shape; returns the problems found."""
    problems = []
    if not isinstance(dash.get("schemaVersion"), int) or dash["schemaVersion"] < 36:
        problems.append(f"schemaVersion {dash.get('schemaVersion')} is not a current Grafana's "
                        "(36 or later)")
    for field in ("uid", "title"):
        if not dash.get(field):
            problems.append(f"the dashboard has no {field}")
    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = [v for v in variables.values() if v.get("type") == "datasource"]
    if not ds or ds[0].get("query") != "prometheus" or ds[0].get("name") != "datasource":
        problems.append("no template variable `datasource` of type datasource (prometheus)")
    inst = variables.get("instance")
    if not inst or inst.get("type") != "query":
        problems.append("no template variable `instance` of type query")
    elif (inst.get("datasource") or {}).get("uid") not in DATASOURCE_UIDS:
        problems.append(f"variable instance uses datasource {inst.get('datasource')}, not "
                        "${datasource}")
    elif not re.match(r"label_values\(\s*[a-z_:][a-z0-9_:]*\s*,\s*instance\s*\)$",
                      str(inst.get("query", "")).strip()):
        problems.append(f"variable instance's query {inst.get('query')!r} is not "
                        "label_values(METRIC, instance)")
    seen = {}
    boxes = []
    for p in all_panels(dash.get("panels", [])):
        pid, title = p.get("id"), p.get("title")
        where = f"panel {pid} \"{title}\""
        if not isinstance(pid, int):
            problems.append(f"{where}: id is not an integer")
        elif pid in seen:
            problems.append(f"{where}: id {pid} is also panel \"{seen[pid]}\"'s")
        seen[pid] = title
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "hwxy") or g["x"] + g["w"] > 24:
            problems.append(f"{where}: gridPos {g} is not within the 24 columns")
        elif p.get("type") != "row" or not p.get("collapsed"):
            for other, og in boxes:
                if (g["x"] < og["x"] + og["w"] and og["x"] < g["x"] + g["w"]
                        and g["y"] < og["y"] + og["h"] and og["y"] < g["y"] + g["h"]):
                    problems.append(f"{where} overlaps {other}")
            boxes.append((where, g))
        if p.get("type") == "row":
            continue
        if (p.get("datasource") or {}).get("uid") not in DATASOURCE_UIDS:
            problems.append(f"{where}: datasource {p.get('datasource')} is not ${{datasource}}")
        targets = p.get("targets", [])
        if not targets:
            problems.append(f"{where} has no targets")
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs):
            problems.append(f"{where}: refIds {refs} repeat")
        for t in targets:
            if not str(t.get("expr", "")).strip():
                problems.append(f"{where} target {t.get('refId')} has no expr")
            if (t.get("datasource") or {}).get("uid") not in DATASOURCE_UIDS:
                problems.append(f"{where} target {t.get('refId')}: datasource "
                                f"{t.get('datasource')} is not ${{datasource}}")
    return problems
