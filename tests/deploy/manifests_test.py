#!/usr/bin/env python3
"""The Kubernetes manifests (deploy/kubernetes) render, and say what berthd needs.

Renders deploy/kubernetes, deploy/kubernetes/classes and deploy/kubernetes/monitoring with
`kubectl kustomize`, parses the YAML with python3-yaml, and checks the objects against each
other and against the built berthd (`berthd --help`, `berthd controller --help`; nothing is
started). Exit 0 when every check passes, 1 when one fails, 77 (skipped) when kubectl or
python3-yaml is missing.

    manifests_test.py --source-dir DIR --berthd PATH

BERTH_KUBECTL: the kubectl to render with (default: kubectl on PATH); several, separated by
":", must all render the same objects (e.g. kustomize v5 and Debian 12's kubectl 1.20).

This script reads the options, renders and runs the checks and reports; the checks are in
manifests/ (its __init__ lists them), what this script shares with dashboard_check.py in
deploy_common.
"""

import argparse
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

from deploy_common import SKIPPED, Failure, Skip, yaml
from manifests.cluster import ClusterChecks
from manifests.containers import ContainerChecks
from manifests.crds import CrdChecks
from manifests.objects import ObjectChecks
from manifests.ports import PortChecks
from manifests.prestop import PrestopChecks


class Suite(ObjectChecks, ContainerChecks, PrestopChecks, ClusterChecks, PortChecks,
            CrdChecks):
    """Every check; main runs them in the order of their names, as unittest would."""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--source-dir", required=True)
    p.add_argument("--berthd", required=True)
    opts = p.parse_args()
    opts.kubectls = [k for k in os.environ.get("BERTH_KUBECTL", "kubectl").split(":") if k]
    if yaml is None:
        print("SKIP: python3-yaml is missing (scripts/install-deps.sh --test installs it)")
        return SKIPPED
    missing = [k for k in opts.kubectls if shutil.which(k) is None]
    if missing:
        print(f"SKIP: {', '.join(missing)} not found: the manifests cannot be rendered "
              "(scripts/install-deps.sh --test installs kubernetes-client)")
        return SKIPPED
    if not os.access(opts.berthd, os.X_OK):
        print(f"FAIL: berthd {opts.berthd} is not an executable")
        return 1

    suite = Suite(opts)
    try:
        suite.setup()
    except Failure as e:
        print(f"FAIL - setup: {e}")
        return 1
    passed = failed = skipped = 0
    for name in sorted(n for n in dir(suite) if n.startswith("test_")):
        try:
            getattr(suite, name)()
            print(f"ok - {name}")
            passed += 1
        except Skip as e:
            print(f"SKIP - {name}: {e}")
            skipped += 1
        except (Failure, KeyError, TypeError, AttributeError) as e:
            print(f"FAIL - {name}: {type(e).__name__ + ' ' if not isinstance(e, Failure) else ''}"
                  f"{e}")
            failed += 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
