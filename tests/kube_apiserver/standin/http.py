"""The HTTPS request handler: the bearer token, the routes (discovery, resources and their
status subresource, the /standin/ test hooks), per-verb counts, one log line per request,
and the chunked stream of a watch."""

import hmac
import json
import sys
import time
import traceback
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from . import errors, verbs
from .errors import ApiError
from .resources import VERSION_INFO
from .selectors import parse_fields, parse_labels
from .table import table, wants_table
from .watch import stream

DEFAULT_WATCH_TIMEOUT = 1800  # a real server's --min-request-timeout


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "berth-standin"

    # -- plumbing ---------------------------------------------------------------------------

    def log_message(self, fmt, *args):
        pass  # one line per request, from _log

    def _log(self, code):
        took = (time.monotonic() - self._started) * 1000
        sys.stderr.write(f"standin: {self.command} {self.path} {code} {took:.1f}ms\n")
        sys.stderr.flush()

    def _send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        for text in self._warnings:
            # RFC 7234's Warning as the server writes it (k8s.io/apiserver/pkg/warning).
            self.send_header("Warning", "299 - " + json.dumps(text))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self._log(code)

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _json_body(self):
        raw = self._body()
        try:
            return json.loads(raw or b"null")
        except ValueError as e:
            raise errors.bad_request(f"the body of the request could not be decoded: {e}")

    def _authorized(self):
        got = self.headers.get("Authorization", "")
        return hmac.compare_digest(got.encode(), f"Bearer {self.server.token}".encode())

    def _handle(self):
        self._started = time.monotonic()
        self._warnings = []
        try:
            if not self._authorized():
                self._body()
                raise errors.unauthorized()
            url = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            parts = [p for p in url.path.split("/") if p]
            if parts and parts[0] == "standin":
                return self._hook(parts[1:])
            found = self._discovery(parts)
            if found is not None:
                self.server.store.count("get", "discovery")
                return self._send(200, found)
            self._resource(parts, query)
        except ApiError as e:
            self._send(e.code, e.body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # a bug of the stand-in: say so, as a real server's 500 would
            traceback.print_exc()
            self.close_connection = True
            self._send(500, errors.status(500, "InternalError", f"stand-in error: {e!r}"))

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    # -- routes -----------------------------------------------------------------------------

    def _discovery(self, parts):
        if self.command != "GET":
            return None
        reg = self.server.registry
        if parts == ["version"]:
            return VERSION_INFO
        if parts == ["api"]:
            return reg.api_versions(f"127.0.0.1:{self.server.server_address[1]}")
        if parts == ["apis"]:
            return reg.api_group_list()
        if len(parts) == 2 and parts[0] == "api":
            return reg.resource_list("", parts[1])
        if len(parts) == 2 and parts[0] == "apis" and parts[1] in reg.groups():
            return reg.api_group(parts[1], reg.groups()[parts[1]])
        if len(parts) == 3 and parts[0] == "apis":
            return reg.resource_list(parts[1], parts[2])
        return None

    def _hook(self, parts):
        store = self.server.store
        self._body()
        if self.command == "POST" and parts == ["compact"]:
            return self._send(200, {"compactedResourceVersion": str(store.compact())})
        if self.command == "POST" and parts == ["stall-watches"]:
            store.set_stalled(True)
            return self._send(200, {"stalled": True})
        if self.command == "POST" and parts == ["resume-watches"]:
            store.set_stalled(False)
            return self._send(200, {"stalled": False})
        if self.command == "GET" and parts == ["counts"]:
            with store.cond:
                return self._send(200, dict(store.counts))
        raise ApiError(404, "NotFound", "no such test hook: /standin/" + "/".join(parts))

    def _split(self, parts):
        """(resource, namespace, name, subresource) from a resource path, or a 404."""
        if parts[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            ns, rest = rest[1], rest[2:]
        res = self.server.registry.find(group, version, rest[0]) if rest else None
        if res is None or len(rest) > 3 or (ns is not None and not res.namespaced):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if sub is not None and (sub != "status" or not res.status_subresource):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return res, ns, name, sub

    def _resource(self, parts, query):
        res, ns, name, sub = self._split(parts)
        store = self.server.store
        verb = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete"}[self.command]
        if name is None and verb == "get":
            verb = "watch" if query.get("watch") in ("true", "1") else "list"
        if verb not in res.verbs or (name is None) != (verb in ("create", "list", "watch")):
            self._body()
            raise errors.method_not_allowed(self.command)
        if res.namespaced and ns is None and verb not in ("list", "watch"):
            self._body()
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        store.count(verb, f"{res.plural}/{sub}" if sub else res.plural)
        if verb == "watch":
            return self._watch(res, ns, query)
        if verb == "list":
            code, body = verbs.list_(store, res, ns, parse_labels(query.get("labelSelector")),
                                     parse_fields(query.get("fieldSelector")),
                                     self._int(query, "limit", 0), query.get("continue"))
            if wants_table(self.headers.get("Accept")):
                body = table(res, body["items"], body["metadata"])
            return self._send(code, body)
        if verb == "get":
            code, body = verbs.get(store, res, ns, name)
            if wants_table(self.headers.get("Accept")):
                body = table(res, [body], {"resourceVersion": body["metadata"]["resourceVersion"]})
            return self._send(code, body)
        if verb == "create":
            return self._send(*verbs.create(store, res, ns, self._json_body(), self._warnings))
        if verb == "update":
            answer = verbs.update(store, res, ns, name, self._json_body(), sub, self._warnings)
            return self._send(*self._late(answer, sub))
        if verb == "patch":
            answer = verbs.patch(store, res, ns, name, self.headers.get("Content-Type"),
                                 self._body(), sub, self._warnings)
            return self._send(*self._late(answer, sub))
        self._body()
        return self._send(*verbs.delete(store, res, ns, name))

    def _late(self, answer, subresource):
        """The answer of a write, after --status-write-latency-ms for a status write."""
        if subresource == "status" and self.server.status_write_latency > 0:
            time.sleep(self.server.status_write_latency)
        return answer

    @staticmethod
    def _int(query, key, default):
        try:
            return int(query.get(key, default))
        except ValueError:
            raise errors.bad_request(f"{key}: not an integer: {query.get(key)}")

    # -- watch ------------------------------------------------------------------------------

    def _watch(self, res, ns, query):
        labels = parse_labels(query.get("labelSelector"))
        fields = parse_fields(query.get("fieldSelector"))
        rv = query.get("resourceVersion")
        if rv not in (None, "") and not rv.isdigit():
            raise errors.bad_request(f"resourceVersion: Invalid value: {rv!r}")
        timeout = self._int(query, "timeoutSeconds", DEFAULT_WATCH_TIMEOUT)
        bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        self._log(200)
        self.close_connection = True

        def send(event):
            data = json.dumps(event).encode() + b"\n"
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        try:
            stream(self.server.store, res, ns, labels, fields, rv, bookmarks, timeout,
                   self.server.bookmark_interval, send)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
