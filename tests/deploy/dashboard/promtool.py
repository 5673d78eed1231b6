"""What promtool says: check rules on one recording rule per expression (every expression
parses), and check config on each scrape config, with Kubernetes discovery swapped for a
static target when this promtool is built without it (as Debian's is)."""

import json
import os
import re
import subprocess
import tempfile

from deploy_common import Failure, yaml

from .expressions import expressions, substitute


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
