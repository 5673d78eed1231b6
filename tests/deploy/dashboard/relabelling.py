"""The pod-discovery job's relabelling, run rather than read: a real Prometheus on loopback,
with file discovery handing it the labels Kubernetes pod discovery would, must make one
target of each annotated running pod at POD_IP:PORT/PATH (IPv6 too), scrape it, and make none
of a pod that is not annotated or not running. promtool check config cannot tell a
relabelling that drops every target from one that works."""

import http.server
import json
import os
import socket
import subprocess
import tempfile
import threading
import time

from deploy_common import yaml

from .live import prometheus_get


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
