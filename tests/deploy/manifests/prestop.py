"""The preStop hook: it runs `berthd prestop` with flags that command knows, talks to the
same admin socket and driver name as the container's berthd, and the pod's grace period
covers its deadline and berthd's stop after it."""

import os
import re

from deploy_common import Skip

from .lookups import expect, flag_names, flag_value, help_flags, run_berthd
from .rendered import Rendered


class PrestopChecks(Rendered):
    def prestop(self):
        hook = self.berthd_c.get("lifecycle", {}).get("preStop", {}).get("exec", {})
        cmd = hook.get("command", [])
        expect(len(cmd) >= 2, f"berthd's preStop is not an exec of berthd prestop: {hook}")
        return cmd

    def test_prestop_runs_the_hook(self):
        cmd = self.prestop()
        binary = self.berthd_c.get("command", ["berthd"])[0]
        expect(os.path.basename(cmd[0]) == "berthd" and cmd[1] == "prestop",
               f"preStop runs {cmd[:2]}, not berthd prestop")
        expect(cmd[0] == binary, f"preStop runs {cmd[0]}, the container runs {binary}")
        deadline = flag_value(cmd, "--deadline-s")
        expect(deadline is not None and deadline.isdigit() and int(deadline) > 0,
               f"preStop gives no positive --deadline-s: {cmd}")

    def test_prestop_flags_are_berthds(self):
        cmd = self.prestop()
        apps = os.path.join(self.src, "apps")
        has_hook = any('"prestop"' in open(os.path.join(d, f), errors="replace").read()
                       for d, _, fs in os.walk(apps) for f in fs if f.endswith(".cpp"))
        if not has_hook:
            raise Skip("apps/ has no prestop subcommand yet; its flags are checked once it has")
        code, out = run_berthd(self.berthd, ["prestop", "--help"])
        expect(code == 0, f"`berthd prestop --help` exited {code}: {out.strip()}")
        known = help_flags(out)
        for name in flag_names(cmd[2:]):
            expect(name in known, f"preStop passes {name}, which `berthd prestop --help` "
                   "does not list")
        # Like berthd, the hook checks every option before it answers --help.
        code, out = run_berthd(self.berthd, cmd[1:] + ["--help"])
        expect(code == 0, f"berthd refuses the preStop args {cmd[1:]}: {out.strip()}")

    def test_prestop_talks_to_this_berthd(self):
        cmd = self.prestop()
        # The hook's defaults are berthd's; where the container changes one, so must the hook.
        for daemon_flag, hook_flag in (("--admin-socket", "--admin-socket"),
                                       ("--csi-driver-name", "--driver-name")):
            m = re.search(re.escape(daemon_flag) + r" [^\n]*\(default ([^)\s]+)\)", self.help)
            expect(m, f"cannot read {daemon_flag}'s default from `berthd --help`")
            daemon = flag_value(self.args, daemon_flag) or m.group(1)
            hook = flag_value(cmd, hook_flag) or m.group(1)
            expect(daemon == hook, f"berthd runs with {daemon_flag} {daemon}, its preStop hook "
                   f"with {hook_flag} {hook}")

    def test_grace_period_exceeds_the_deadline(self):
        deadline = int(flag_value(self.prestop(), "--deadline-s"))
        grace = self.pod.get("terminationGracePeriodSeconds")
        expect(isinstance(grace, int), "the pod sets no terminationGracePeriodSeconds")
        expect(grace > deadline, f"terminationGracePeriodSeconds {grace} is not longer than "
               f"--deadline-s {deadline}")
        # After the hook, SIGTERM: berthd may wait --stop-timeout-ms for in-flight requests.
        stop_ms = flag_value(self.args, "--stop-timeout-ms")
        if stop_ms is None:
            m = re.search(r"--stop-timeout-ms N[^\n]*\(default (\d+)\)", self.help)
            expect(m, "cannot read --stop-timeout-ms's default from `berthd --help`")
            stop_ms = m.group(1)
        stop_s = -(-int(stop_ms) // 1000)
        expect(grace >= deadline + stop_s, f"terminationGracePeriodSeconds {grace} leaves "
               f"berthd less than its --stop-timeout-ms ({stop_s} s) after a {deadline} s hook")
