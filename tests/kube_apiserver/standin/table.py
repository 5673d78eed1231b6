"""The meta.k8s.io/v1 Table a real server answers `kubectl get` with (Accept: ...;as=Table):
a Name column, the CRD's additionalPrinterColumns, and each row's object as
PartialObjectMetadata. Dates are shown as ages, as the server's table convertor shows them."""

import calendar
import re
import time


_FILTER = re.compile(r'^(\w+)\[\?\(@\.(\w+)=="([^"]*)"\)\]$')


def _lookup(obj, json_path):
    """The value at a printer column's JSONPath: .a.b, and a list filtered by one field's
    value, .a[?(@.type=="X")].b (the first match, as kubectl shows a single value)."""
    node = obj
    for part in re.findall(r'\w+(?:\[\?\(@\.\w+=="[^"]*"\)\])?', json_path):
        wanted = _FILTER.match(part)
        key = wanted.group(1) if wanted else part
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
        if wanted:
            field, value = wanted.group(2), wanted.group(3)
            found = [i for i in node if isinstance(i, dict) and i.get(field) == value] \
                if isinstance(node, list) else []
            if not found:
                return None
            node = found[0]
    return node


def _age(stamp):
    try:
        then = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
    except (TypeError, ValueError):
        return "<unknown>"
    seconds = max(0, int(time.time() - then))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= 2 * size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def table(res, objects, list_meta):
    columns = [{"name": "Name", "type": "string", "format": "name", "priority": 0,
                "description": "Name must be unique within a namespace."}]
    for c in res.columns:
        columns.append({"name": c["name"], "type": c["type"], "format": c.get("format", ""),
                        "description": c.get("description", ""),
                        "priority": c.get("priority", 0)})
    rows = []
    for o in objects:
        cells = [o["metadata"]["name"]]
        for c in res.columns:
            value = _lookup(o, c["jsonPath"])
            cells.append(_age(value) if c["type"] == "date" and value is not None else value)
        rows.append({"cells": cells, "object": {"kind": "PartialObjectMetadata",
                                                "apiVersion": "meta.k8s.io/v1",
                                                "metadata": o["metadata"]}})
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta,
            "columnDefinitions": columns, "rows": rows}


def wants_table(accept):
    return "as=Table" in (accept or "")
