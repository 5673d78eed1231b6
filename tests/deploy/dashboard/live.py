"""Against a live berthd (tests/e2e runs these after a workload): every series the
expressions read is on its /metrics page with the labels they match on, and on a Prometheus
scraping it the variables have values and every expression evaluates. What the offline
checks take from the docs, these take from the endpoint itself."""

import json
import re
import urllib.error
import urllib.parse
import urllib.request

from .expressions import Parsed, TARGET_LABELS, expressions, substitute


def page_series(text):
    """{series name: {label names}} of a /metrics page."""
    series = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s", line)
        if not m:
            continue
        labels = set(re.findall(r'([a-zA-Z_]\w*)\s*=\s*"', m.group(2) or ""))
        series.setdefault(m.group(1), set()).update(labels)
    return series


def check_against_page(dash, text):
    """Every series the expressions read is on the page, with the labels they match on."""
    series = page_series(text)
    if not series:
        return ["the metrics file holds no series"]
    problems = []
    for where, _, expr in expressions(dash):
        parsed = Parsed(substitute(expr, dash))
        for name in sorted(set(parsed.metrics)):
            if name not in series:
                problems.append(f"{where}: {name} is not on the metrics page")
        for metric, label in parsed.matchers:
            if metric in series and label not in series[metric] | TARGET_LABELS:
                problems.append(f"{where}: {metric} has no label {label} on the page "
                                f"({sorted(series[metric])})")
    for v in dash.get("templating", {}).get("list", []):
        m = re.match(r"label_values\(\s*([a-z_:][a-z0-9_:]*)", str(v.get("query", "")))
        if m and m.group(1) not in series:
            problems.append(f"variable {v['name']}: {m.group(1)} is not on the metrics page")
    return problems


def prometheus_get(url, path, params):
    full = url.rstrip("/") + path + "?" + urllib.parse.urlencode(params, doseq=True)
    try:
        with urllib.request.urlopen(full, timeout=30) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        try:
            return json.load(e)
        except ValueError:
            return {"status": "error", "error": f"HTTP {e.code}"}


def check_against_prometheus(dash, url):
    """The instance variable has values; every expression evaluates; returns (problems,
    notes)."""
    problems, notes = [], []
    values = {}
    for v in dash.get("templating", {}).get("list", []):
        m = re.match(r"label_values\(\s*(.+?)\s*,\s*(\w+)\s*\)$", str(v.get("query", "")).strip())
        if not m:
            continue
        got = prometheus_get(url, f"/api/v1/label/{m.group(2)}/values", {"match[]": m.group(1)})
        if got.get("status") != "success" or not got.get("data"):
            problems.append(f"variable {v['name']}: {v['query']} has no values on {url} "
                            f"({got.get('error', 'no series')})")
        else:
            values[v["name"]] = "|".join(got["data"])  # Grafana's All: an alternation
    empty = []
    for where, _, expr in expressions(dash):
        got = prometheus_get(url, "/api/v1/query", {"query": substitute(expr, dash, values)})
        if got.get("status") != "success":
            problems.append(f"{where}: {url} refuses it: {got.get('errorType', '')} "
                            f"{got.get('error', got)}")
        elif not got.get("data", {}).get("result"):
            empty.append(where)
    notes.append(f"{url}: {len(expressions(dash)) - len(empty)} expressions return data, "
                 f"{len(empty)} none yet" + (f" ({'; '.join(empty)})" if empty else ""))
    return problems, notes
