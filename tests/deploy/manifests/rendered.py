"""What every check class reads: the three rendered directories, berthd's --help, the
DaemonSet's pod and berthd container with its args, and the controller Deployment's pod and
berthd container with its args. Rendered once (setup), before any check runs; a check class
names its checks test_*. `berthd controller --help` is asked only by the checks that need it
(controller_help), so a berthd without that command fails those checks, not all of them."""

import os

from deploy_common import yaml

from .lookups import container, expect, flag_value, one, render, run_berthd

BASE = "deploy/kubernetes"
CLASSES = "deploy/kubernetes/classes"
MONITORING = "deploy/kubernetes/monitoring"


class Rendered:
    def __init__(self, opts):
        self.src = opts.source_dir
        self.berthd = opts.berthd
        self.kubectls = opts.kubectls
        self.base = []
        self.classes = []
        self.monitoring = []
        self.help = ""
        self._controller_help = None

    def setup(self):
        self.base = render(self.kubectls[0], os.path.join(self.src, BASE))
        self.classes = render(self.kubectls[0], os.path.join(self.src, CLASSES))
        self.monitoring = render(self.kubectls[0], os.path.join(self.src, MONITORING))
        code, self.help = run_berthd(self.berthd, ["--help"])
        expect(code == 0, f"`berthd --help` exited {code}: {self.help}")
        self.ds = one(self.base, "DaemonSet")
        self.pod = self.ds["spec"]["template"]["spec"]
        self.berthd_c = container(self.pod, "berthd")
        self.args = self.berthd_c.get("args", [])
        self.driver = flag_value(self.args, "--csi-driver-name") or "berth.csi.dev"
        self.deploy = one(self.base, "Deployment")
        self.ctl_pod = self.deploy["spec"]["template"]["spec"]
        self.ctl_c = container(self.ctl_pod, "berthd", "the controller Deployment")
        self.ctl_args = self.ctl_c.get("args", [])

    def controller_help(self):
        """`berthd controller --help`: its text, or a Failure when berthd has no such command."""
        if self._controller_help is None:
            code, out = run_berthd(self.berthd, ["controller", "--help"])
            self._controller_help = (code, out)
        code, out = self._controller_help
        expect(code == 0, f"`berthd controller --help` exited {code}: {out.strip()[:300]}")
        return out

    def kustomization(self, directory):
        with open(os.path.join(self.src, directory, "kustomization.yaml")) as f:
            return yaml.safe_load(f)

    def resource_docs(self, directory):
        docs = []
        for res in self.kustomization(directory).get("resources", []):
            path = os.path.join(self.src, directory, res)
            expect(os.path.isfile(path), f"{directory}: resource {res} is not a file")
            with open(path) as f:
                docs += [(res, d) for d in yaml.safe_load_all(f) if d is not None]
        return docs
