#!/usr/bin/env python3
"""A Kubernetes API server stand-in for tests: HTTPS on 127.0.0.1 with a bearer token,
serving the kinds of the CRD files given, core Nodes and Events, and discovery, with the
wire shapes and refusals of a real API server (docs/kubernetes-api.md says which, and what
it leaves out). The package standin/ holds the parts; this file starts them.

    standin.py --dir DIR --crds deploy/kubernetes/crds [--port 0] [--bookmark-seconds 1]
               [--status-write-latency-ms 0]

Writes DIR/kubeconfig and DIR/port (each atomically, after the socket listens), and the CA,
the server certificate and its key. It has no RBAC: DIR/kubeconfig-controller and
DIR/kubeconfig-node, which a real server's run (real_server.py) fills with each
ServiceAccount's token, are copies of DIR/kubeconfig. Serves until SIGTERM or SIGINT.

--status-write-latency-ms answers each write of a status subresource that long after it is
applied (its watch events go out at once), as a real server's slower writes do: a writer
then learns of its write after others have seen it and acted.
"""

import argparse
import os
import secrets
import signal
import socket
import ssl
import sys
import threading
from http.server import ThreadingHTTPServer

sys.dont_write_bytecode = True  # run from the source tree, it leaves no __pycache__ there
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from standin.files import kubeconfig, write_atomically  # noqa: E402
from standin.http import Handler  # noqa: E402
from standin.resources import Registry, core_resources, load_crds  # noqa: E402
from standin.store import Store  # noqa: E402
from standin.tls import make_certs  # noqa: E402


class Server(ThreadingHTTPServer):
    daemon_threads = True  # an open watch does not hold the exit
    request_queue_size = 64

    def get_request(self):
        # Go's net/http (the real API server's) sets TCP_NODELAY on every connection; without
        # it, a response written as headers and then body waits on the client's delayed ACK.
        conn, addr = super().get_request()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, addr


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", required=True)
    p.add_argument("--crds", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--bookmark-seconds", type=float, default=1.0)
    p.add_argument("--status-write-latency-ms", type=float, default=0.0)
    opts = p.parse_args()
    directory = os.path.abspath(opts.dir)
    os.makedirs(directory, exist_ok=True)
    ca, cert, key = make_certs(directory)

    server = Server(("127.0.0.1", opts.port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    # The handshake on first read, in the request's thread: a slow client holds no one else.
    server.socket = context.wrap_socket(server.socket, server_side=True,
                                        do_handshake_on_connect=False)
    server.token = secrets.token_hex(24)
    server.store = Store()
    server.registry = Registry(load_crds(opts.crds) + core_resources())
    server.bookmark_interval = opts.bookmark_seconds
    server.status_write_latency = opts.status_write_latency_ms / 1000

    port = server.server_address[1]
    config = kubeconfig("standin", f"https://127.0.0.1:{port}", ca, "standin", server.token)
    for name in ("kubeconfig-controller", "kubeconfig-node", "kubeconfig"):
        write_atomically(os.path.join(directory, name), config)
    write_atomically(os.path.join(directory, "port"), f"{port}\n")
    sys.stderr.write(f"standin: listening on https://127.0.0.1:{port} ({directory})\n")
    sys.stderr.flush()

    def stop(signum, frame):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve_forever(poll_interval=0.2)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
