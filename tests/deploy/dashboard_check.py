#!/usr/bin/env python3
"""The Grafana dashboard (deploy/grafana) and the scrape configs (deploy/prometheus) are valid.

Offline, always:
  - the dashboard is JSON with unique panel ids, a datasource variable and an instance
    variable; every panel (rows aside) has targets with an expr, and every datasource is the
    variable; panels do not overlap;
  - every expression, with Grafana's variables replaced, parses: promtool check rules on a
    temporary rules file with one recording rule per expression;
  - docs/running.md's "Metrics" table lists the families protocols/metrics writes, no more;
  - every metric it names is a family of that table (a histogram
    through its _bucket, _sum or _count), every label it names is one of that family's (or a
    target label), histogram_quantile() reads _bucket series by `le`, and rate()/increase()
    read counters only;
  - promtool check config accepts each scrape config (a Kubernetes discovery block is
    replaced by a static target when this promtool is built without it, as Debian's is);
  - the pod-discovery job's relabelling runs in a real Prometheus on loopback, with file
    discovery handing it the labels Kubernetes discovery would: annotated pods become one
    target each at POD_IP:PORT/PATH, others none (check_kubernetes_relabelling).
Online, when given (after a workload against a live berthd; tests/e2e does this):
  --metrics-file FILE  a /metrics page of that berthd: every series the expressions read
                       is in it, with the labels they use;
  --prometheus URL     a Prometheus server scraping it: the instance variable has values,
                       and every expression evaluates without error (/api/v1/query).
--self-test checks the checker: broken expressions, misspelt metrics and labels, bad
datasources and a page without a metric must each fail.

    dashboard_check.py [--source-dir DIR] [--self-test] [--prometheus URL] [--metrics-file FILE]

Exit 0 when every check passes, 1 when one fails, 77 (skipped) when promtool, prometheus or
python3-yaml is missing, unless CI=true or BERTH_REQUIRE_ALL=1: then a skip fails.
"""

import argparse
import copy
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

try:
    import yaml
except ImportError:
    yaml = None

SKIPPED = 77
DASHBOARD = "deploy/grafana/berth-dashboard.json"
SCRAPE_CONFIGS = ["deploy/prometheus/scrape-berth.yml",
                  "deploy/prometheus/scrape-berth-kubernetes.yml"]
DOCS = "docs/running.md"
DATASOURCE_UIDS = {"${datasource}", "$datasource"}

# Grafana's built-in variables, as the checks replace them.
BUILTINS = {"__rate_interval": "1m", "__interval": "30s", "__range": "1h", "__range_s": "3600",
            "__interval_ms": "30000"}
# Labels a scrape adds to every series (the static job, pod discovery, the ServiceMonitor).
TARGET_LABELS = {"instance", "job", "namespace", "pod", "node"}

AGGREGATORS = {"sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk",
               "quantile", "count_values", "group"}
KEYWORDS = AGGREGATORS | {"by", "without", "on", "ignoring", "group_left", "group_right",
                          "bool", "offset", "and", "or", "unless", "atan2", "inf", "nan"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
RATE_FUNCTIONS = {"rate", "irate", "increase"}
TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`|\[[^\]]*\]'
                   r"|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?:ms|[smhdwy])*"
                   r"|[A-Za-z_:][A-Za-z0-9_:]*|=~|!~|!=|==|>=|<=|\S")


class Failure(Exception):
    pass


class Skip(Exception):
    pass


# -- reading the dashboard ----------------------------------------------------------------------

def all_panels(panels):
    """Every panel, those inside rows included."""
    out = []
    for p in panels:
        out.append(p)
        out += all_panels(p.get("panels", []))
    return out


def expressions(dash):
    """(where, panel, expr) for every target of every panel."""
    out = []
    for p in all_panels(dash.get("panels", [])):
        for t in p.get("targets", []):
            where = f"panel {p.get('id')} \"{p.get('title')}\" target {t.get('refId')}"
            out.append((where, p, t.get("expr", "")))
    return out


def variable_names(dash):
    return {v.get("name") for v in dash.get("templating", {}).get("list", [])}


def substitute(expr, dash, values=None):
    """expr with every $var / ${var} replaced: Grafana's built-ins by a duration, the
    dashboard's variables by `values` (default: a regex that matches anything). Raises
    Failure naming a variable the dashboard does not define."""
    values = values or {}
    names = variable_names(dash)

    def sub(m):
        name = m.group(1) or m.group(2)
        if name in BUILTINS:
            return BUILTINS[name]
        if name in names:
            return values.get(name, ".+")
        raise Failure(f"uses ${name}, which is neither a dashboard variable "
                      f"({sorted(names)}) nor one of Grafana's {sorted(BUILTINS)}")
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", sub, expr)


class Parsed:
    """What an expression names: metrics (and which are inside rate()/increase()), labels
    in matchers and groupings, histogram_quantile() calls and their `by` labels."""

    def __init__(self, expr):
        self.metrics, self.rated, self.labels = [], set(), set()
        self.matchers = []  # (metric or None, label)
        self.quantiles = []  # (metrics inside, labels of the `by` inside)
        tokens = TOKEN.findall(expr)
        stack = []  # for each open paren: the function before it ("" if none)
        brace_metric = None
        in_brace = False
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
            if tok == "{":
                in_brace = True
                prev = tokens[i - 1] if i else ""
                brace_metric = prev if prev in self.metrics else None
            elif tok == "}":
                in_brace = False
            elif in_brace:
                if re.match(r"[A-Za-z_]\w*$", tok) and nxt in ("=", "!=", "=~", "!~"):
                    self.labels.add(tok)
                    self.matchers.append((brace_metric, tok))
            elif tok in GROUPING and nxt == "(":
                j = i + 2
                group = []
                while j < len(tokens) and tokens[j] != ")":
                    if tokens[j] != ",":
                        group.append(tokens[j])
                    j += 1
                self.labels.update(group)
                for frame in stack:
                    if frame[0] == "histogram_quantile":
                        frame[2].update(group)
                i = j
            elif tok == "(":
                prev = tokens[i - 1] if i else ""
                is_call = bool(re.match(r"[A-Za-z_]\w*$", prev)) and prev not in GROUPING
                stack.append([prev if is_call else "", [], set()])
            elif tok == ")":
                if stack:
                    frame = stack.pop()
                    if frame[0] == "histogram_quantile":
                        self.quantiles.append((frame[1], frame[2]))
            elif re.match(r"[A-Za-z_:][A-Za-z0-9_:]*$", tok) and nxt != "(" \
                    and tok not in KEYWORDS:
                self.metrics.append(tok)
                for frame in stack:
                    frame[1].append(tok)
                    if frame[0] in RATE_FUNCTIONS:
                        self.rated.add(tok)
            i += 1


# -- the families docs/running.md documents -------------------------------------------------------

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


# -- offline checks ------------------------------------------------------------------------------

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


def check_names(dash, families):
    """Metrics, labels, histograms and rates against the documented families."""
    problems = []
    for where, p, expr in expressions(dash):
        try:
            text = substitute(expr, dash)
        except Failure as e:
            problems.append(f"{where}: {e}")
            continue
        for m in re.finditer(r"\$\{?(\w+)\}?", expr):
            if m.group(1) in variable_names(dash) and not re.search(
                    r'=~\s*"[^"]*' + re.escape(m.group(0)), expr):
                problems.append(f"{where}: ${m.group(1)} is used outside a =~ matcher (a "
                                "multi-value or All selection is a regex)")
        parsed = Parsed(text)
        allowed = set(TARGET_LABELS)
        for name in parsed.metrics:
            fam = family_of(name, families)
            if fam is None:
                hint = (" (a histogram: read it through _bucket, _sum or _count)"
                        if families.get(name, ("",))[0] == "histogram" else "")
                problems.append(f"{where}: metric {name} is not a family of {DOCS}'s Metrics "
                                f"table{hint}")
                continue
            allowed |= fam[2]
            if name.endswith("_bucket"):
                allowed.add("le")
            if name in parsed.rated and fam[1] == "gauge":
                problems.append(f"{where}: rate()/increase() of the gauge {name}")
        for label in sorted(parsed.labels - allowed):
            problems.append(f"{where}: label {label} is on none of {sorted(set(parsed.metrics))}")
        for inside, by in parsed.quantiles:
            if not any(n.endswith("_bucket") for n in inside):
                problems.append(f"{where}: histogram_quantile() reads no _bucket series")
            if "le" not in by:
                problems.append(f"{where}: histogram_quantile() without `le` in its by ()")
        for t in p.get("targets", []):
            if t.get("expr") == expr:
                for label in re.findall(r"\{\{\s*(\w+)\s*\}\}", t.get("legendFormat", "")):
                    if label not in allowed:
                        problems.append(f"{where}: legend names {{{{{label}}}}}, a label "
                                        "the expression does not have")
    return problems


def run(cmd, timeout=60):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def check_promql(dash, promtool):
    """promtool check rules on one recording rule per expression (and the variable query's
    metric); returns the problems found."""
    rules, names = [], {}
    for where, _, expr in expressions(dash):
        try:
            text = substitute(expr, dash)
        except Failure:
            continue  # check_names reports it
        record = f"dashboard:expr_{len(rules)}"
        names[record] = where
        rules.append({"record": record, "expr": text})
    for v in dash.get("templating", {}).get("list", []):
        m = re.match(r"label_values\(\s*(.+?)\s*,\s*\w+\s*\)$", str(v.get("query", "")).strip())
        if m:
            record = f"dashboard:variable_{v['name']}"
            names[record] = f"variable {v['name']}"
            rules.append({"record": record, "expr": m.group(1)})
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        json.dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)  # JSON is YAML
        path = f.name
    try:
        code, out = run([promtool, "check", "rules", path])
    finally:
        os.unlink(path)
    if code == 0:
        return []
    for record, where in names.items():
        out = re.sub(r'"' + re.escape(record) + r'"', f"{record} ({where})", out)
    return [f"promtool check rules refuses the dashboard's expressions:\n{out}"]


def promtool_has_kubernetes_sd(promtool):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "probe.yml")
        with open(path, "w") as f:
            f.write("scrape_configs:\n  - job_name: probe\n    kubernetes_sd_configs:\n"
                    "      - role: pod\n")
        code, _ = run([promtool, "check", "config", path])
        return code == 0


def check_scrape_config(path, promtool, kubernetes_sd):
    """promtool check config on path; returns (problems, notes)."""
    with open(path) as f:
        config = yaml.safe_load(f)
    notes = []
    target = path
    tmp = None
    jobs = config.get("scrape_configs", []) if isinstance(config, dict) else []
    if not jobs:
        return [f"{path}: no scrape_configs"], notes
    uses_k8s = [j.get("job_name") for j in jobs if "kubernetes_sd_configs" in j]
    if uses_k8s and not kubernetes_sd:
        for j in jobs:
            sd = j.pop("kubernetes_sd_configs", None)
            if sd is None:
                continue
            roles = [s.get("role") for s in sd]
            if not roles or any(r not in ("pod", "service", "endpoints", "endpointslice",
                                          "node", "ingress") for r in roles):
                return [f"{path}: job {j.get('job_name')}: kubernetes_sd_configs roles "
                        f"{roles}"], notes
            j["static_configs"] = [{"targets": ["127.0.0.1:9809"]}]
        tmp = tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False)
        yaml.safe_dump(config, tmp)
        tmp.close()
        target = tmp.name
        notes.append(f"NOTE: {promtool} is built without Kubernetes discovery (Debian's is): "
                     f"in {os.path.basename(path)}, jobs {uses_k8s} were checked with a static "
                     "target in place of kubernetes_sd_configs")
    try:
        code, out = run([promtool, "check", "config", target])
    finally:
        if tmp:
            os.unlink(tmp.name)
    if code != 0:
        return [f"promtool check config {path}:\n{out}"], notes
    return [], notes


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Not the default /metrics: a job that ignores prometheus.io/path then scrapes a 404.
PROBE_PATH = "/probe/metrics"


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != PROBE_PATH:
            self.send_error(404)
            return
        body = b"# TYPE relabel_probe gauge\nrelabel_probe 1\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def check_kubernetes_relabelling(path, prometheus):
    """Runs the pod-discovery jobs of path in a real Prometheus on loopback, with file
    discovery standing in for Kubernetes: pods with the __meta_kubernetes_* labels that pod
    discovery gives. An annotated running pod (two declared ports) must become one target at
    POD_IP:ANNOTATED_PORT/ANNOTATED_PATH that scrapes, with namespace, pod and node labels; an
    IPv6 pod [IP]:PORT; an unannotated or pending pod none. Returns the problems found."""
    with open(path) as f:
        config = yaml.safe_load(f)
    jobs = [j for j in config.get("scrape_configs", []) if "kubernetes_sd_configs" in j]
    if not jobs:
        return []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    page_port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def pod(name, ip, phase="Running", annotated=True):
        labels = {"__meta_kubernetes_namespace": "berth-system",
                  "__meta_kubernetes_pod_name": name, "__meta_kubernetes_pod_ip": ip,
                  "__meta_kubernetes_pod_node_name": "node-1",
                  "__meta_kubernetes_pod_phase": phase}
        if annotated:
            labels.update({"__meta_kubernetes_pod_annotation_prometheus_io_scrape": "true",
                           "__meta_kubernetes_pod_annotation_prometheus_io_port": str(page_port),
                           "__meta_kubernetes_pod_annotation_prometheus_io_path": PROBE_PATH})
        host = f"[{ip}]" if ":" in ip else ip
        return {"targets": [f"{host}:9808", f"{host}:9809"], "labels": labels}
    problems = []
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "pods.json"), "w") as f:
            json.dump([pod("berth-node-a", "127.0.0.1"), pod("berth-node-v6", "fd00::1"),
                       pod("other", "127.0.0.2", annotated=False),
                       pod("berth-node-pending", "127.0.0.3", phase="Pending")], f)
        for j in jobs:
            del j["kubernetes_sd_configs"]
            j["file_sd_configs"] = [{"files": [os.path.join(d, "pods.json")]}]
            j["scrape_interval"] = "1s"
        config["scrape_configs"] = jobs
        with open(os.path.join(d, "prometheus.yml"), "w") as f:
            yaml.safe_dump(config, f)
        web = f"127.0.0.1:{free_port()}"
        log = open(os.path.join(d, "prometheus.log"), "w+")
        proc = subprocess.Popen([prometheus, f"--config.file={d}/prometheus.yml",
                                 f"--storage.tsdb.path={d}/data", f"--web.listen-address={web}"],
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 30
            active = []
            while time.time() < deadline:
                time.sleep(0.5)
                if proc.poll() is not None:
                    log.seek(0)
                    return [f"prometheus exited {proc.returncode}: {log.read()[-2000:]}"]
                try:
                    got = prometheus_get(f"http://{web}", "/api/v1/targets", {})
                except (OSError, ValueError):
                    continue
                active = got.get("data", {}).get("activeTargets", [])
                ipv4 = [t for t in active if t["labels"].get("pod") == "berth-node-a"]
                if ipv4 and ipv4[0].get("health") == "up":
                    break
            by_pod = {}
            for t in active:
                by_pod.setdefault(t["labels"].get("pod"), []).append(t)
            want = {"berth-node-a": f"http://127.0.0.1:{page_port}{PROBE_PATH}",
                    "berth-node-v6": f"http://[fd00::1]:{page_port}{PROBE_PATH}"}
            for name, url in want.items():
                got = by_pod.get(name, [])
                if len(got) != 1:
                    problems.append(f"pod {name} (two declared ports) became {len(got)} "
                                    "targets, not 1")
                    continue
                if got[0].get("scrapeUrl") != url:
                    problems.append(f"pod {name} is scraped at {got[0].get('scrapeUrl')}, "
                                    f"not {url}")
                labels = got[0]["labels"]
                if labels.get("namespace") != "berth-system" or labels.get("node") != "node-1":
                    problems.append(f"pod {name}'s target has labels {labels}: no namespace "
                                    "or node")
            a = by_pod.get("berth-node-a", [{}])[0]
            if a and a.get("health") != "up":
                problems.append(f"pod berth-node-a's target is {a.get('health')}: "
                                f"{a.get('lastError')}")
            for name in ("other", "berth-node-pending"):
                if name in by_pod:
                    problems.append(f"pod {name} (not annotated, or not running) is scraped")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            server.shutdown()
            log.close()
    return problems


# -- online checks -------------------------------------------------------------------------------

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


# -- the checker's own test ----------------------------------------------------------------------

def self_test(dash, families, promtool):
    """Each mutation of a valid dashboard (or page) must be refused. Returns the mutations
    that were not."""
    def first_target(d):
        return next(t for p in all_panels(d["panels"]) for t in p.get("targets", []))

    def mutate(change):
        d = copy.deepcopy(dash)
        change(d)
        return d

    def set_expr(expr):
        return lambda d: first_target(d).update(expr=expr)

    def replace_everywhere(old, new):
        def change(d):
            for p in all_panels(d["panels"]):
                for t in p.get("targets", []):
                    t["expr"] = t["expr"].replace(old, new)
        return change

    offline = [
        ("an unbalanced parenthesis", set_expr('sum(rate(berth_operations_total[5m])')),
        ("rate() of an instant vector", set_expr("rate(berth_operations_total)")),
        ("an unknown function", set_expr("rates(berth_operations_total[5m])")),
        ("a misspelt metric", set_expr("sum(rate(berth_operation_total[5m]))")),
        ("a histogram read without _bucket",
         set_expr("histogram_quantile(0.5, sum by (le) "
                  "(rate(berth_operation_duration_seconds[5m])))")),
        ("histogram_quantile() without le",
         set_expr("histogram_quantile(0.5, sum by (operation) "
                  "(rate(berth_operation_duration_seconds_bucket[5m])))")),
        ("a misspelt label", set_expr('sum by (operaton) (rate(berth_operations_total[5m]))')),
        ("rate() of a gauge", set_expr("rate(berth_journal_bytes[5m])")),
        ("an unknown variable", set_expr('berth_ready{instance=~"$host"}')),
        ("a duplicate panel id", lambda d: d["panels"][2].update(id=d["panels"][1]["id"])),
        ("a panel without targets", lambda d: d["panels"][1].update(targets=[])),
        ("a fixed datasource", lambda d: first_target(d).update(
            datasource={"type": "prometheus", "uid": "P1809F7CD0C75ACF3"})),
        ("no instance variable", lambda d: d["templating"].update(
            list=[v for v in d["templating"]["list"] if v["name"] != "instance"])),
    ]
    missed = []
    for what, change in offline:
        d = mutate(change)
        if not (check_structure(d) + check_names(d, families) + check_promql(d, promtool)):
            missed.append(f"offline: {what}")
    page = "\n".join(n + "{" + ",".join(label + '="x"' for label in sorted(ls)) + "} 1"
                     for n, ls in fake_page(dash).items())
    if check_against_page(dash, page):
        missed.append(f"online: a page with every series is refused: "
                      f"{check_against_page(dash, page)[:3]}")
    for what, text in (
            ("a page without berth_journal_bytes",
             "\n".join(l for l in page.splitlines() if not l.startswith("berth_journal_bytes{"))),
            ("a page whose berth_volumes has no kind label",
             re.sub(r'(berth_volumes\{[^}]*)kind="x",?', r"\1", page)),
            ("an empty page", "")):
        if not check_against_page(dash, text):
            missed.append(f"online: {what}")
    if not check_against_page(mutate(replace_everywhere("berth_journal_bytes",
                                                        "berth_journal_byte")), page):
        missed.append("online: a misspelt metric")
    return missed


def fake_page(dash):
    """{series: labels} that satisfies every expression (for the self-test)."""
    out = {}
    for _, _, expr in expressions(dash):
        parsed = Parsed(substitute(expr, dash))
        for name in parsed.metrics:
            out.setdefault(name, set())
        for metric, label in parsed.matchers:
            if metric:
                out[metric].add(label)
    out.setdefault("berth_build_info", set())
    return out


# -- main ----------------------------------------------------------------------------------------

def required():
    return os.environ.get("CI") == "true" or os.environ.get("BERTH_REQUIRE_ALL") == "1"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source-dir", default=os.path.dirname(os.path.dirname(here)))
    p.add_argument("--dashboard", help=f"default: SOURCE/{DASHBOARD}")
    p.add_argument("--scrape-config", action="append",
                   help=f"default: SOURCE/{' and SOURCE/'.join(SCRAPE_CONFIGS)}")
    p.add_argument("--promtool", default="promtool")
    p.add_argument("--prometheus-binary", default="prometheus",
                   help="the server the pod-discovery relabelling is run in")
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--prometheus", metavar="URL")
    p.add_argument("--metrics-file", metavar="FILE")
    opts = p.parse_args()
    src = opts.source_dir
    dashboard = opts.dashboard or os.path.join(src, DASHBOARD)
    configs = opts.scrape_config or [os.path.join(src, c) for c in SCRAPE_CONFIGS]

    promtool = shutil.which(opts.promtool)
    server = shutil.which(opts.prometheus_binary)
    missing = []
    if promtool is None:
        missing.append(f"{opts.promtool} (Debian package prometheus)")
    if server is None:
        missing.append(f"{opts.prometheus_binary} (Debian package prometheus)")
    if yaml is None:
        missing.append("python3-yaml")
    if missing:
        say = "FAIL (CI=true or BERTH_REQUIRE_ALL=1: required)" if required() else "SKIP"
        print("#" * 76)
        print(f"## {say}: dashboard_check.py: {', '.join(missing)} not found; "
              "scripts/install-deps.sh --test installs them. Nothing was checked.")
        print("#" * 76)
        return 1 if required() else SKIPPED

    failed = 0

    def report(name, problems, notes=()):
        nonlocal failed
        for n in notes:
            print(n)
        if problems:
            failed += 1
            print(f"FAIL - {name}:")
            for pr in problems:
                print("    " + pr.replace("\n", "\n    "))
        else:
            print(f"ok - {name}")

    try:
        with open(dashboard) as f:
            dash = json.load(f)
    except (OSError, ValueError) as e:
        print(f"FAIL - {dashboard} is not readable JSON: {e}")
        return 1
    try:
        families = documented_families(src)
    except (OSError, Failure) as e:
        print(f"FAIL - {e}")
        return 1
    report(f"{DOCS}'s Metrics table and protocols/metrics",
           *check_docs_against_source(src, families))
    report("structure", check_structure(dash))
    report("metric and label names", check_names(dash, families))
    report("promtool check rules (every expression)", check_promql(dash, promtool))
    k8s = promtool_has_kubernetes_sd(promtool)
    for c in configs:
        shown = os.path.relpath(c, src) if os.path.abspath(c).startswith(
            os.path.abspath(src) + os.sep) else c
        report(f"promtool check config {shown}",
               *check_scrape_config(c, promtool, k8s))
        with open(c) as f:
            if "kubernetes_sd_configs" in f.read():
                report(f"pod-discovery relabelling of {shown} in a real Prometheus",
                       check_kubernetes_relabelling(c, server))
    if opts.self_test:
        missed = self_test(dash, families, promtool)
        report("self-test (each mutation is refused)",
               [f"not refused: {m}" for m in missed])
    if opts.metrics_file:
        try:
            with open(opts.metrics_file) as f:
                text = f.read()
        except OSError as e:
            text = None
            report(f"metrics file {opts.metrics_file}", [str(e)])
        if text is not None:
            report(f"every series on {opts.metrics_file}", check_against_page(dash, text))
    if opts.prometheus:
        report(f"every expression on {opts.prometheus}",
               *check_against_prometheus(dash, opts.prometheus))
    print("FAILED" if failed else "passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
