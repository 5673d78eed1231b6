"""Ports, probes and scraping: no two containers of a pod (the node plugin's, the controller's)
listen on one port, each declared port is listened on, every probe calls a listener on a path
it serves, the node's berthd's metrics endpoint is reachable from outside its container, and
the scrape annotations and the ServiceMonitor example reach it."""

import re

from deploy_common import Failure

from .lookups import expect, flag_value, one
from .rendered import BASE, MONITORING, Rendered

# What listens in the pod's network namespace. berthd's metrics endpoint serves these
# paths; its --metrics-address defaults to 127.0.0.1:9808 (read from `berthd --help` when
# it says). The CSI sidecars listen only where a flag says so, except the livenessprobe
# sidecar, whose --health-port defaults to 9808.
BERTHD_PATHS = {"/metrics", "/healthz", "/readyz"}
BERTHD_METRICS_DEFAULT = "127.0.0.1:9808"
SIDECAR_PATHS = {"liveness-probe": {"/healthz"}}
SIDECAR_DEFAULT_PORTS = {"liveness-probe": 9808}
SIDECAR_LISTEN_FLAGS = ("--health-port", "--http-endpoint", "--metrics-address")


def address_port(address, where):
    """The port of HOST:PORT (or :PORT, [V6]:PORT, or a bare port) as an int."""
    port = address.rsplit(":", 1)[-1]
    expect(port.isdigit() and 0 < int(port) < 65536, f"{where}: {address!r} names no port "
           "between 1 and 65535")
    return int(port)


def address_host(address):
    return address.rsplit(":", 1)[0].strip("[]") if ":" in address else ""


def probes(c):
    """(kind, probe) for each of c's liveness, readiness and startup probes."""
    return [(k, c[k]) for k in ("livenessProbe", "readinessProbe", "startupProbe") if k in c]


def probe_port(c, probe, where):
    """The port number an httpGet probe of container c calls (a name is c's own port)."""
    port = probe.get("httpGet", {}).get("port")
    if isinstance(port, int):
        return port
    for p in c.get("ports", []):
        if p.get("name") == port:
            return p["containerPort"]
    raise Failure(f"{where} names port {port!r}, which is not one of {c['name']}'s ports "
                  "(kubelet looks a probe's named port up in its own container)")


class PortChecks(Rendered):
    def metrics_address(self):
        """berthd's --metrics-address in the pod, or its default."""
        value = flag_value(self.args, "--metrics-address")
        if value is None:
            m = re.search(r"--metrics-address[^\n]*\(default ([^)\s]+)\)", self.help)
            value = m.group(1) if m else BERTHD_METRICS_DEFAULT
        return value

    def controller_metrics_address(self):
        """The controller's berthd --metrics-address, its default when `berthd controller
        --help` lists the flag, or "" when that command serves no metrics endpoint."""
        value = flag_value(self.ctl_args, "--metrics-address")
        if value is None:
            out = self.controller_help()
            if "--metrics-address" not in out:
                return ""
            m = re.search(r"--metrics-address[^\n]*\(default ([^)\s]+)\)", out)
            value = m.group(1) if m else BERTHD_METRICS_DEFAULT
        return value

    def listeners(self, pod=None, address=None):
        """{port: (container, paths it serves)} for every TCP listener in the pod (the node
        plugin's unless another pod and its berthd's --metrics-address are given), and the
        clashes: (port, first container, second container)."""
        found, clashes = {}, []
        if pod is None:
            pod, address = self.pod, self.metrics_address()

        def add(port, name, paths):
            if port in found:
                clashes.append((port, found[port][0], name))
            else:
                found[port] = (name, paths)
        if address:
            add(address_port(address, "berthd --metrics-address"), "berthd", BERTHD_PATHS)
        for c in pod.get("containers", []) + pod.get("initContainers", []):
            if c["name"] == "berthd":
                continue
            args = c.get("args", [])
            ports = [address_port(flag_value(args, f), f"{c['name']} {f}")
                     for f in SIDECAR_LISTEN_FLAGS if flag_value(args, f) is not None]
            if not ports and c["name"] in SIDECAR_DEFAULT_PORTS:
                ports = [SIDECAR_DEFAULT_PORTS[c["name"]]]
            for port in ports:
                add(port, c["name"], SIDECAR_PATHS.get(c["name"], set()))
        return found, clashes

    def test_no_two_containers_listen_on_one_port(self):
        _, clashes = self.listeners()
        expect(not clashes, "containers of the pod listen on one port (they share the pod's "
               "network namespace, the second fails to bind): " +
               ", ".join(f"{p}: {a} and {b}" for p, a, b in clashes))

    def test_declared_ports_are_unique_and_listened_on(self):
        self.expect_declared_ports(self.pod, self.listeners()[0])

    def expect_declared_ports(self, pod, found):
        numbers, names = {}, {}
        for c in pod.get("containers", []) + pod.get("initContainers", []):
            for p in c.get("ports", []):
                n, name = p.get("containerPort"), p.get("name")
                expect(n not in numbers, f"containerPort {n} is declared by {numbers.get(n)} "
                       f"and {c['name']}")
                numbers[n] = c["name"]
                if name:
                    expect(len(name) <= 15 and name not in names, f"port name {name!r} of "
                           f"{c['name']} is longer than 15 or also {names.get(name)}'s")
                    names[name] = c["name"]
                expect(n in found, f"{c['name']} declares port {n} ({name}), on which nothing "
                       f"in the pod listens (listeners: {sorted(found)})")

    def test_metrics_endpoint_is_reachable(self):
        address = self.metrics_address()
        expect(address, "berthd's --metrics-address is empty: no /metrics, /readyz or "
               "/healthz in the pod")
        host = address_host(address)
        expect(host in ("0.0.0.0", "::", "") or host.startswith("$("),
               f"berthd --metrics-address {address} is not reachable from outside the "
               "container (kubelet's probes and Prometheus call the pod's IP): use "
               "0.0.0.0:PORT")
        port = address_port(address, "berthd --metrics-address")
        named = [p for p in self.berthd_c.get("ports", []) if p.get("name") == "metrics"]
        expect(named and named[0].get("containerPort") == port, f"berthd has no port named "
               f"metrics with containerPort {port} (its --metrics-address)")

    def test_scrape_annotations_name_berthds_metrics_port(self):
        notes = self.ds["spec"]["template"].get("metadata", {}).get("annotations", {})
        expect(notes.get("prometheus.io/scrape") == "true",
               "the pod template lacks the annotation prometheus.io/scrape: \"true\"")
        port = notes.get("prometheus.io/port")
        expect(isinstance(port, str) and port.isdigit(), f"prometheus.io/port {port!r} is not "
               "a port number in a string")
        want = address_port(self.metrics_address(), "berthd --metrics-address")
        expect(int(port) == want, f"prometheus.io/port {port} is not berthd's "
               f"--metrics-address port {want}")
        declared = {p.get("name"): p.get("containerPort") for p in self.berthd_c.get("ports", [])}
        expect(declared.get("metrics") == int(port), f"prometheus.io/port {port} is not "
               f"berthd's metrics containerPort {declared.get('metrics')}")
        path = notes.get("prometheus.io/path", "/metrics")
        expect(path == "/metrics", f"prometheus.io/path {path} is not /metrics")

    def test_probes_call_a_listener_and_a_path_it_serves(self):
        self.expect_probes_reach_listeners(self.pod, self.listeners()[0])

    def test_controller_ports_and_probes(self):
        # The same rules in the controller's pod: its berthd's endpoint (if that command has
        # one) and the liveness-probe share one network namespace.
        found, clashes = self.listeners(self.ctl_pod, self.controller_metrics_address())
        expect(not clashes, "containers of the controller's pod listen on one port: " +
               ", ".join(f"{p}: {a} and {b}" for p, a, b in clashes))
        self.expect_declared_ports(self.ctl_pod, found)
        self.expect_probes_reach_listeners(self.ctl_pod, found)
        expect(any(k == "livenessProbe" for k, _ in probes(self.ctl_c)), "the controller's "
               "berthd has no livenessProbe")

    def expect_probes_reach_listeners(self, pod, found):
        for c in pod.get("containers", []) + pod.get("initContainers", []):
            for kind, probe in probes(c):
                where = f"{c['name']}'s {kind}"
                if "httpGet" not in probe:
                    continue
                port = probe_port(c, probe, where)
                expect(port in found, f"{where} calls port {port}, on which nothing in the pod "
                       f"listens (listeners: {sorted(found)})")
                owner, paths = found[port]
                path = probe["httpGet"].get("path", "/")
                expect(path in paths, f"{where} calls {path} on port {port}, which {owner} "
                       f"serves only {sorted(paths)}")

    def test_berthd_readiness_is_its_readyz(self):
        probe = self.berthd_c.get("readinessProbe", {})
        where = "berthd's readinessProbe"
        expect(probe.get("httpGet", {}).get("path") == "/readyz", f"{where} is not an httpGet "
               f"of /readyz: {probe}")
        want = address_port(self.metrics_address(), "berthd --metrics-address")
        got = probe_port(self.berthd_c, probe, where)
        expect(got == want, f"{where} calls port {got}, berthd serves /readyz on {want}")

    def test_service_monitor_example_scrapes_berthd(self):
        expect(MONITORING.rsplit("/", 1)[-1] + "/" not in
               [r.rstrip("/") + "/" for r in self.kustomization(BASE).get("resources", [])],
               f"the base lists {MONITORING}: its CRD may not exist on the cluster")
        expect(not [o for o in self.base if o["kind"] == "ServiceMonitor"],
               "the base renders a ServiceMonitor: its CRD may not exist on the cluster")
        sm = one(self.monitoring, "ServiceMonitor")
        svc = one(self.monitoring, "Service")
        expect(sm["apiVersion"] == "monitoring.coreos.com/v1", f"ServiceMonitor "
               f"{sm['apiVersion']}")
        pod_labels = self.ds["spec"]["template"]["metadata"]["labels"]
        selector = svc["spec"].get("selector", {})
        expect(selector and all(pod_labels.get(k) == v for k, v in selector.items()),
               f"Service {svc['metadata']['name']} selects {selector}, not the berth-node pods")
        match = sm["spec"].get("selector", {}).get("matchLabels", {})
        labels = svc["metadata"].get("labels", {})
        expect(match and all(labels.get(k) == v for k, v in match.items()),
               f"the ServiceMonitor selects {match}, the Service is labelled {labels}")
        names = sm["spec"].get("namespaceSelector", {}).get("matchNames",
                                                            [sm["metadata"]["namespace"]])
        expect(svc["metadata"]["namespace"] in names, "the ServiceMonitor does not look in "
               f"the Service's namespace {svc['metadata']['namespace']}")
        want = address_port(self.metrics_address(), "berthd --metrics-address")
        ports = {p.get("name"): p for p in svc["spec"].get("ports", [])}
        for e in sm["spec"].get("endpoints", []):
            expect(e.get("port") in ports, f"the ServiceMonitor scrapes port {e.get('port')}, "
                   f"which the Service does not name ({sorted(ports)})")
            target = ports[e["port"]].get("targetPort", ports[e["port"]].get("port"))
            if isinstance(target, str):
                declared = {p.get("name"): p.get("containerPort")
                            for p in self.berthd_c.get("ports", [])}
                expect(target in declared, f"the Service's targetPort {target} is not a port "
                       "of berthd")
                target = declared[target]
            expect(target == want, f"the ServiceMonitor reaches port {target}, berthd serves "
                   f"/metrics on {want}")
            expect(e.get("path", "/metrics") == "/metrics", f"the ServiceMonitor scrapes "
                   f"{e.get('path')}, not /metrics")
        expect(sm["spec"].get("endpoints"), "the ServiceMonitor has no endpoints")
