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

This script reads the options, runs the checks and reports; the checks are in dashboard/
(its __init__ lists them), what this script shares with manifests_test.py in deploy_common.
"""

import argparse
import json
import os
import shutil
import sys

# The checks are modules beside this script: importable whatever the working directory, and
# when this file is imported rather than run. Run by ctest, it leaves no __pycache__ in the
# source tree.
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
if __name__ == "__main__":
    sys.dont_write_bytecode = True

from deploy_common import SKIPPED, Failure, yaml
from dashboard.families import DOCS, check_docs_against_source, documented_families
from dashboard.live import check_against_page, check_against_prometheus
from dashboard.names import check_names
from dashboard.promtool import (check_promql, check_scrape_config,
                                promtool_has_kubernetes_sd)
from dashboard.relabelling import check_kubernetes_relabelling
from dashboard.self_test import self_test
from dashboard.structure import check_structure

DASHBOARD = "deploy/grafana/berth-dashboard.json"
SCRAPE_CONFIGS = ["deploy/prometheus/scrape-berth.yml",
                  "deploy/prometheus/scrape-berth-kubernetes.yml"]


def required():
    return os.environ.get("CI") == "true" or os.environ.get("BERTH_REQUIRE_ALL") == "1"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source-dir", default=os.path.dirname(os.path.dirname(_HERE)))
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
