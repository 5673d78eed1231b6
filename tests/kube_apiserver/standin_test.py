#!/usr/bin/env python3
"""The API server stand-in (standin.py) behaves as a real API server does where berthd
relies on it: started on port 0 in a temporary directory, driven over HTTPS that verifies
the CA its kubeconfig names, as berthd's client would be.

    standin_test.py [unittest options]

Exit 0 when every check passes, 1 when one fails, 77 (skipped) when python3-yaml or the
openssl command is missing. The kubectl check skips on its own when kubectl is missing.
"""

import http.client
import json
import os
import re
import queue
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
CRDS = os.path.join(SOURCE, "deploy", "kubernetes", "crds")
SKIPPED = 77
BOOKMARK_SECONDS = 0.3

try:
    import yaml
except ImportError:
    yaml = None

GV = "/apis/berth.csi.dev/v1alpha1"
VOLUMES = f"{GV}/berthvolumes"
MERGE = "application/merge-patch+json"


def volume(name, labels=None, **spec):
    body = {"apiVersion": "berth.csi.dev/v1alpha1", "kind": "BerthVolume",
            "metadata": {"name": name},
            "spec": {"name": name, "nodeName": "n1", "sizeBytes": 1024, **spec}}
    if labels:
        body["metadata"]["labels"] = labels
    return body


class Watch:
    """A watch read in a thread: its events in a queue, None when the stream ends."""

    def __init__(self, test, path):
        self.events = queue.Queue()
        self.conn = test.connection(timeout=30)
        self.conn.request("GET", path, headers=test.headers())
        self.sock = self.conn.sock
        self.response = self.conn.getresponse()
        test.assertEqual(self.response.status, 200)
        test.addCleanup(self.close)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            while True:
                line = self.response.readline()
                if not line:
                    break
                self.events.put(json.loads(line))
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # closed under the reader (AttributeError: http.client dropped its file)
        self.events.put(None)

    def next(self, timeout=5, skip_bookmarks=True):
        end = time.monotonic() + timeout
        while True:
            event = self.events.get(timeout=max(0.01, end - time.monotonic()))
            if event is None or not (skip_bookmarks and event["type"] == "BOOKMARK"):
                return event

    def quiet_for(self, seconds):
        """True when nothing at all (not even a bookmark) arrives for seconds."""
        try:
            self.events.get(timeout=seconds)
            return False
        except queue.Empty:
            return True

    def close(self):
        # Shut the socket first: closing the response alone would wait for the reader
        # thread's blocked read, which holds the buffer's lock until its timeout.
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.response.close()
        self.conn.close()


class StandinTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="berth-standin-")
        cls.log = open(os.path.join(cls.dir, "standin.log"), "w")
        cls.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "standin.py"), "--dir", cls.dir, "--crds", CRDS,
             "--port", "0", "--bookmark-seconds", str(BOOKMARK_SECONDS)],
            stderr=cls.log, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        port_file = os.path.join(cls.dir, "port")
        deadline = time.monotonic() + 20
        while not os.path.exists(port_file):
            if cls.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the stand-in did not start; see {cls.log.name}")
            time.sleep(0.05)
        with open(os.path.join(cls.dir, "kubeconfig")) as f:
            cls.kubeconfig = yaml.safe_load(f)
        cls.server = cls.kubeconfig["clusters"][0]["cluster"]["server"]
        cls.token = cls.kubeconfig["users"][0]["user"]["token"]
        cls.tls = ssl.create_default_context(
            cafile=cls.kubeconfig["clusters"][0]["cluster"]["certificate-authority"])

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        try:
            cls.proc.wait(10)
        except subprocess.TimeoutExpired:
            cls.proc.kill()
        cls.log.close()
        if os.environ.get("BERTH_KEEP_STANDIN"):
            print(f"stand-in directory kept: {cls.dir}")
        else:
            shutil.rmtree(cls.dir, ignore_errors=True)

    # -- the client -------------------------------------------------------------------------

    def connection(self, timeout=10):
        host, port = self.server.split("//")[1].split(":")
        return http.client.HTTPSConnection(host, int(port), context=self.tls, timeout=timeout)

    def headers(self, token=None, **more):
        h = {"Authorization": f"Bearer {token or self.token}", "Accept": "application/json"}
        h.update(more)
        return h

    def call(self, method, path, body=None, content_type="application/json", token=None,
             headers=None):
        conn = self.connection()
        data = None if body is None else (body if isinstance(body, bytes)
                                          else json.dumps(body).encode())
        h = self.headers(token, **{"Content-Type": content_type})
        h.update(headers or {})
        conn.request(method, path, body=data, headers=h)
        r = conn.getresponse()
        raw = r.read()
        conn.close()
        return r.status, json.loads(raw) if raw else None

    def ok(self, method, path, body=None, content_type="application/json", want=(200, 201)):
        code, got = self.call(method, path, body, content_type)
        self.assertIn(code, want, f"{method} {path}: {code} {got}")
        return got

    def assertStatus(self, got, code, reason):
        self.assertEqual({k: got.get(k) for k in ("kind", "apiVersion", "status", "code",
                                                    "reason")},
                         {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                          "code": code, "reason": reason}, got)
        self.assertEqual(got["metadata"], {})
        self.assertIsInstance(got["message"], str)

    def create(self, name, labels=None, **spec):
        return self.ok("POST", VOLUMES, volume(name, labels, **spec))

    def names(self, query):
        got = self.ok("GET", f"{VOLUMES}?{query}")
        return sorted(i["metadata"]["name"] for i in got["items"])

    # -- the files and the door -------------------------------------------------------------

    def test_writes_kubeconfig_and_port(self):
        with open(os.path.join(self.dir, "port")) as f:
            port = int(f.read())
        self.assertEqual(self.server, f"https://127.0.0.1:{port}")
        self.assertEqual(self.kubeconfig["current-context"], "standin")
        self.assertFalse([n for n in os.listdir(self.dir) if n.endswith(".tmp")])

    def test_refuses_requests_without_the_token(self):
        for token in ("", "wrong"):
            conn = self.connection()
            conn.request("GET", VOLUMES, headers={"Authorization": f"Bearer {token}"})
            r = conn.getresponse()
            got = json.loads(r.read())
            conn.close()
            self.assertEqual(r.status, 401)
            self.assertStatus(got, 401, "Unauthorized")
        code, got = self.call("GET", "/standin/counts", token="wrong")
        self.assertEqual(code, 401)

    def test_discovery_names_the_crds_and_their_status(self):
        self.assertEqual(self.ok("GET", "/version")["major"], "1")
        self.assertEqual(self.ok("GET", "/api")["versions"], ["v1"])
        groups = self.ok("GET", "/apis")["groups"]
        self.assertIn("berth.csi.dev", [g["name"] for g in groups])
        listed = {r["name"]: r for r in self.ok("GET", GV)["resources"]}
        self.assertEqual(set(listed), {"berthvolumes", "berthvolumes/status", "berthsnapshots",
                                       "berthsnapshots/status"})
        self.assertEqual(listed["berthvolumes"]["shortNames"], ["bvol"])
        self.assertFalse(listed["berthvolumes"]["namespaced"])
        core = {r["name"] for r in self.ok("GET", "/api/v1")["resources"]}
        self.assertEqual(core, {"nodes", "events"})

    # -- create, get, list ------------------------------------------------------------------

    def test_create_sets_server_fields_and_get_returns_it(self):
        made = self.create("cg-1")
        meta = made["metadata"]
        self.assertEqual(meta["generation"], 1)
        for field in ("uid", "resourceVersion", "creationTimestamp"):
            self.assertTrue(meta.get(field), field)
        self.assertEqual(self.ok("GET", f"{VOLUMES}/cg-1"), made)
        code, got = self.call("POST", VOLUMES, volume("cg-1"))
        self.assertEqual(code, 409)
        self.assertStatus(got, 409, "AlreadyExists")
        self.assertEqual(got["message"], 'berthvolumes.berth.csi.dev "cg-1" already exists')
        code, got = self.call("GET", f"{VOLUMES}/cg-missing")
        self.assertEqual(code, 404)
        self.assertStatus(got, 404, "NotFound")
        self.assertEqual(got["message"], 'berthvolumes.berth.csi.dev "cg-missing" not found')
        self.assertEqual(got["details"], {"name": "cg-missing", "group": "berth.csi.dev",
                                          "kind": "berthvolumes"})

    def test_generate_name(self):
        body = volume("")
        body["metadata"] = {"generateName": "gen-"}
        made = self.ok("POST", VOLUMES, body)
        self.assertRegex(made["metadata"]["name"], r"^gen-[a-z0-9]{5}$")

    def test_resource_versions_rise_on_every_write(self):
        a = int(self.create("rv-1")["metadata"]["resourceVersion"])
        b = int(self.ok("PATCH", f"{VOLUMES}/rv-1", {"metadata": {"labels": {"x": "1"}}},
                        MERGE)["metadata"]["resourceVersion"])
        listed = int(self.ok("GET", VOLUMES)["metadata"]["resourceVersion"])
        self.assertLess(a, b)
        self.assertLessEqual(b, listed)

    def test_list_with_each_label_selector_form(self):
        self.create("ls-a", {"sel": "t", "tier": "a"})
        self.create("ls-b", {"sel": "t", "tier": "b"})
        self.create("ls-c", {"sel": "t"})
        cases = {"sel=t,tier=a": ["ls-a"], "sel==t,tier==b": ["ls-b"],
                 "sel=t,tier!=a": ["ls-b", "ls-c"], "sel=t,tier in (a,b)": ["ls-a", "ls-b"],
                 "sel=t,tier notin (a)": ["ls-b", "ls-c"], "sel=t,tier": ["ls-a", "ls-b"],
                 "sel=t,!tier": ["ls-c"], "sel": ["ls-a", "ls-b", "ls-c"]}
        from urllib.parse import quote
        for selector, want in cases.items():
            self.assertEqual(self.names(f"labelSelector={quote(selector)}"), want, selector)
        code, got = self.call("GET", f"{VOLUMES}?labelSelector={quote('a in b')}")
        self.assertEqual(code, 400)

    def test_list_with_a_field_selector(self):
        self.create("fs-1")
        self.create("fs-2")
        self.assertEqual(self.names("fieldSelector=metadata.name%3Dfs-2"), ["fs-2"])

    def test_list_pages_with_limit_and_continue(self):
        for i in range(5):
            self.create(f"pg-{i}", {"page": "yes"})
        seen, token, rvs = [], None, set()
        while True:
            query = "labelSelector=page%3Dyes&limit=2" + (f"&continue={token}" if token else "")
            got = self.ok("GET", f"{VOLUMES}?{query}")
            self.assertLessEqual(len(got["items"]), 2)
            seen += [i["metadata"]["name"] for i in got["items"]]
            rvs.add(got["metadata"]["resourceVersion"])
            token = got["metadata"].get("continue")
            if not token:
                break
        self.assertEqual(seen, [f"pg-{i}" for i in range(5)])
        self.assertEqual(len(rvs), 1, "every page of one list is of one resourceVersion")

    def test_continue_token_older_than_the_history_gets_410(self):
        for i in range(3):
            self.create(f"pc-{i}", {"pc": "yes"})
        token = self.ok("GET", f"{VOLUMES}?labelSelector=pc%3Dyes&limit=1")["metadata"]["continue"]
        self.create("pc-later")
        self.ok("POST", "/standin/compact")
        code, got = self.call("GET", f"{VOLUMES}?labelSelector=pc%3Dyes&limit=1&continue={token}")
        self.assertEqual(code, 410)
        self.assertStatus(got, 410, "Expired")

    # -- watch ------------------------------------------------------------------------------

    def test_watch_sends_changes_and_bookmarks(self):
        rv = self.ok("GET", VOLUMES)["metadata"]["resourceVersion"]
        w = Watch(self, f"{VOLUMES}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true"
                        "&fieldSelector=metadata.name%3Dwb-1")
        self.create("wb-1")
        self.ok("PATCH", f"{VOLUMES}/wb-1", {"spec": {"sizeBytes": 2048}}, MERGE)
        self.ok("DELETE", f"{VOLUMES}/wb-1")
        got = [w.next() for _ in range(3)]
        self.assertEqual([e["type"] for e in got], ["ADDED", "MODIFIED", "DELETED"])
        self.assertEqual(got[1]["object"]["spec"]["sizeBytes"], 2048)
        mark = w.next(timeout=5, skip_bookmarks=False)
        self.assertEqual(mark["type"], "BOOKMARK")
        self.assertEqual(set(mark["object"]), {"kind", "apiVersion", "metadata"})
        self.assertEqual(list(mark["object"]["metadata"]), ["resourceVersion"])
        self.assertGreaterEqual(int(mark["object"]["metadata"]["resourceVersion"]),
                                int(got[2]["object"]["metadata"]["resourceVersion"]))

    def test_watch_without_resource_version_starts_with_what_exists(self):
        self.create("wi-1", {"wi": "yes"})
        w = Watch(self, f"{VOLUMES}?watch=1&labelSelector=wi%3Dyes&timeoutSeconds=1")
        first = w.next()
        self.assertEqual((first["type"], first["object"]["metadata"]["name"]), ("ADDED", "wi-1"))
        self.assertIsNone(w.next(timeout=5), "timeoutSeconds ends the stream")

    def test_watch_from_a_compacted_version_gets_410_expired(self):
        old = self.create("wx-1")["metadata"]["resourceVersion"]
        self.ok("PATCH", f"{VOLUMES}/wx-1", {"spec": {"sizeBytes": 7}}, MERGE)
        self.ok("POST", "/standin/compact")
        w = Watch(self, f"{VOLUMES}?watch=true&resourceVersion={old}")
        event = w.next()
        self.assertEqual(event["type"], "ERROR")
        self.assertStatus(event["object"], 410, "Expired")
        self.assertIn(f"too old resource version: {old}", event["object"]["message"])
        self.assertIsNone(w.next(), "the stream ends after the ERROR")
        listed = self.ok("GET", VOLUMES)["metadata"]["resourceVersion"]
        w = Watch(self, f"{VOLUMES}?watch=true&resourceVersion={listed}&timeoutSeconds=1")
        self.assertIsNone(w.next(), "a relist's resourceVersion watches again")

    def test_watch_sends_selector_transitions(self):
        self.create("wt-1", {"wt": "no"})
        rv = self.ok("GET", VOLUMES)["metadata"]["resourceVersion"]
        w = Watch(self, f"{VOLUMES}?watch=true&resourceVersion={rv}&labelSelector=wt%3Dyes")
        self.ok("PATCH", f"{VOLUMES}/wt-1", {"metadata": {"labels": {"wt": "yes"}}}, MERGE)
        self.ok("PATCH", f"{VOLUMES}/wt-1", {"spec": {"sizeBytes": 9}}, MERGE)
        self.ok("PATCH", f"{VOLUMES}/wt-1", {"metadata": {"labels": {"wt": "no"}}}, MERGE)
        self.ok("PATCH", f"{VOLUMES}/wt-1", {"spec": {"sizeBytes": 10}}, MERGE)
        got = [w.next()["type"] for _ in range(3)]
        self.assertEqual(got, ["ADDED", "MODIFIED", "DELETED"])
        self.assertTrue(w.quiet_for(0.5), "a change of an object that matches no longer")

    def test_stalled_watch_goes_silent_but_stays_open(self):
        rv = self.ok("GET", VOLUMES)["metadata"]["resourceVersion"]
        w = Watch(self, f"{VOLUMES}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true"
                        "&fieldSelector=metadata.name%3Dws-1")
        self.assertEqual(w.next(skip_bookmarks=False)["type"], "BOOKMARK")
        self.ok("POST", "/standin/stall-watches")
        try:
            time.sleep(BOOKMARK_SECONDS)
            while not w.events.empty():
                w.events.get()
            self.create("ws-1")
            self.assertTrue(w.quiet_for(4 * BOOKMARK_SECONDS + 0.5), "a stalled watch sent")
        finally:
            self.ok("POST", "/standin/resume-watches")
        event = w.next()
        self.assertEqual((event["type"], event["object"]["metadata"]["name"]), ("ADDED", "ws-1"))

    # -- update and patch -------------------------------------------------------------------

    def test_update_needs_the_current_resource_version(self):
        made = self.create("up-1")
        body = dict(made, spec=dict(made["spec"], sizeBytes=4096))
        stale = json.loads(json.dumps(body))
        fresh = self.ok("PUT", f"{VOLUMES}/up-1", body)
        self.assertEqual(fresh["spec"]["sizeBytes"], 4096)
        code, got = self.call("PUT", f"{VOLUMES}/up-1", stale)
        self.assertEqual(code, 409)
        self.assertStatus(got, 409, "Conflict")
        self.assertEqual(got["message"], 'Operation cannot be fulfilled on '
                         'berthvolumes.berth.csi.dev "up-1": the object has been modified; '
                         'please apply your changes to the latest version and try again')
        del stale["metadata"]["resourceVersion"]
        code, got = self.call("PUT", f"{VOLUMES}/up-1", stale)
        self.assertEqual(code, 422)
        self.assertStatus(got, 422, "Invalid")
        self.assertEqual(got["message"], 'berthvolumes.berth.csi.dev "up-1" is invalid: '
                         "metadata.resourceVersion: Invalid value: 0x0: must be specified for an "
                         "update")
        self.assertEqual(got["details"]["causes"][0]["field"], "metadata.resourceVersion")

    def test_merge_and_json_patches(self):
        self.create("pt-1", {"a": "1"}, parameters={"k": "v", "drop": "me"})
        got = self.ok("PATCH", f"{VOLUMES}/pt-1",
                      {"spec": {"parameters": {"drop": None, "new": "x"}}}, MERGE)
        self.assertEqual(got["spec"]["parameters"], {"k": "v", "new": "x"})
        ops = [{"op": "test", "path": "/spec/sizeBytes", "value": 1024},
               {"op": "replace", "path": "/spec/sizeBytes", "value": 5},
               {"op": "add", "path": "/metadata/labels/b", "value": "2"},
               {"op": "remove", "path": "/metadata/labels/a"}]
        got = self.ok("PATCH", f"{VOLUMES}/pt-1", ops, "application/json-patch+json")
        self.assertEqual((got["spec"]["sizeBytes"], got["metadata"]["labels"]), (5, {"b": "2"}))
        code, got = self.call("PATCH", f"{VOLUMES}/pt-1", ops, "application/json-patch+json")
        self.assertEqual(code, 422, "a failed test operation applies nothing")
        patch = {"metadata": {"resourceVersion": "1"}, "spec": {"sizeBytes": 1}}
        code, got = self.call("PATCH", f"{VOLUMES}/pt-1", patch, MERGE)
        self.assertEqual(code, 409, "a patch naming a stale resourceVersion conflicts")

    def test_strategic_merge_and_apply_patches_are_refused_415(self):
        self.create("pt-415")
        for kind in ("application/strategic-merge-patch+json", "application/apply-patch+yaml"):
            code, got = self.call("PATCH", f"{VOLUMES}/pt-415", {"spec": {"sizeBytes": 1}}, kind)
            self.assertEqual(code, 415, kind)
            self.assertStatus(got, 415, "UnsupportedMediaType")
            self.assertIn("the body of the request was in an unknown format - accepted media "
                          "types include: application/json-patch+json, "
                          "application/merge-patch+json", got["message"])

    def test_status_subresource_and_generation(self):
        made = self.create("st-1")
        body = json.loads(json.dumps(made))
        body["status"] = {"phase": "Ready"}
        got = self.ok("PUT", f"{VOLUMES}/st-1", body)
        self.assertNotIn("status", got, "a write to the resource ignores .status")
        self.assertEqual(got["metadata"]["generation"], 1)
        self.assertEqual(got["metadata"]["resourceVersion"],
                         made["metadata"]["resourceVersion"], "a no-op writes nothing")
        body = json.loads(json.dumps(got))
        body["status"] = {"phase": "Ready", "capacityBytes": 2048, "modifications": 1}
        body["spec"]["sizeBytes"] = 999
        got = self.ok("PUT", f"{VOLUMES}/st-1/status", body)
        self.assertEqual(got["status"]["phase"], "Ready")
        self.assertEqual(got["spec"]["sizeBytes"], 1024, "a status write ignores .spec")
        self.assertEqual(got["metadata"]["generation"], 1, "status does not count")
        self.assertGreater(int(got["metadata"]["resourceVersion"]),
                           int(made["metadata"]["resourceVersion"]))
        got = self.ok("PATCH", f"{VOLUMES}/st-1", {"spec": {"sizeBytes": 4096}}, MERGE)
        self.assertEqual(got["metadata"]["generation"], 2, "a spec change counts")
        self.assertEqual(got["status"]["capacityBytes"], 2048)
        got = self.ok("PATCH", f"{VOLUMES}/st-1/status",
                      {"status": {"observedGeneration": 2}}, MERGE)
        self.assertEqual((got["status"]["observedGeneration"], got["metadata"]["generation"]),
                         (2, 2))
        got = self.ok("PATCH", f"{VOLUMES}/st-1", {"metadata": {"labels": {"l": "1"}}}, MERGE)
        self.assertEqual(got["metadata"]["generation"], 2, "a metadata change does not count")

    # -- delete and finalizers --------------------------------------------------------------

    def test_finalizers_hold_a_deleted_object(self):
        self.create("fin-1")
        self.ok("PATCH", f"{VOLUMES}/fin-1", {"metadata": {"finalizers": ["berth.csi.dev/a"]}},
                MERGE)
        rv = self.ok("GET", VOLUMES)["metadata"]["resourceVersion"]
        w = Watch(self, f"{VOLUMES}?watch=true&resourceVersion={rv}"
                        "&fieldSelector=metadata.name%3Dfin-1")
        got = self.ok("DELETE", f"{VOLUMES}/fin-1")
        self.assertIn("deletionTimestamp", got["metadata"])
        self.assertEqual(self.ok("GET", f"{VOLUMES}/fin-1")["metadata"]["finalizers"],
                         ["berth.csi.dev/a"])
        again = self.ok("DELETE", f"{VOLUMES}/fin-1")
        self.assertEqual(again["metadata"]["resourceVersion"], got["metadata"]["resourceVersion"])
        code, refused = self.call("PATCH", f"{VOLUMES}/fin-1", {"metadata": {"finalizers": [
            "berth.csi.dev/a", "berth.csi.dev/b"]}}, MERGE)
        self.assertEqual(code, 422)
        self.assertStatus(refused, 422, "Invalid")
        self.assertIn('metadata.finalizers: Forbidden: no new finalizers can be added if the '
                      'object is being deleted, found new finalizers []string{"berth.csi.dev/b"}',
                      refused["message"])
        self.ok("PATCH", f"{VOLUMES}/fin-1", {"metadata": {"finalizers": None}}, MERGE)
        code, _ = self.call("GET", f"{VOLUMES}/fin-1")
        self.assertEqual(code, 404)
        self.assertEqual([w.next()["type"] for _ in range(2)], ["MODIFIED", "DELETED"])

    def test_delete_without_finalizers_removes_at_once(self):
        self.create("del-1")
        got = self.ok("DELETE", f"{VOLUMES}/del-1")
        self.assertEqual((got["kind"], got["status"]), ("Status", "Success"))
        code, got = self.call("DELETE", f"{VOLUMES}/del-1")
        self.assertEqual(code, 404)
        self.assertStatus(got, 404, "NotFound")

    # -- schema -----------------------------------------------------------------------------

    def test_schema_failures_are_422_with_their_fields(self):
        cases = {"spec.sizeBytes": {"sizeBytes": "big"},
                 "spec.capability.accessType": {"capability": {"accessType": "tape"}},
                 "spec.mutableParameters.k": {"mutableParameters": {"k": 1}}}
        for field, spec in cases.items():
            code, got = self.call("POST", VOLUMES, volume("sc-x", **spec))
            self.assertEqual(code, 422, field)
            self.assertStatus(got, 422, "Invalid")
            self.assertEqual([c["field"] for c in got["details"]["causes"]], [field], got)
        body = volume("sc-y", sizeBytes=-1)
        del body["spec"]["nodeName"]
        code, got = self.call("POST", VOLUMES, body)
        self.assertEqual(code, 422)
        causes = {c["field"]: c["reason"] for c in got["details"]["causes"]}
        self.assertEqual(causes, {"spec.nodeName": "FieldValueRequired",
                                  "spec.sizeBytes": "FieldValueInvalid"})
        self.assertTrue(got["message"].startswith('BerthVolume.berth.csi.dev "sc-y" is invalid: '))
        code, got = self.call("POST", VOLUMES, volume("sc-z", sizeBytes=2 ** 63))
        self.assertEqual(code, 422, "past int64")
        self.create("sc-ok")
        code, got = self.call("PATCH", f"{VOLUMES}/sc-ok/status",
                              {"status": {"phase": "Gone"}}, MERGE)
        self.assertEqual(code, 422)
        self.assertEqual(got["details"]["causes"][0]["field"], "status.phase")
        code, got = self.call("PATCH", f"{VOLUMES}/sc-ok/status", {"status": {"conditions": [
            {"type": "Ready", "status": "True", "reason": "R", "message": "",
             "lastTransitionTime": "yesterday"}]}}, MERGE)
        self.assertEqual(code, 422)
        self.assertEqual(got["details"]["causes"][0]["field"],
                         "status.conditions[0].lastTransitionTime")

    def test_immutable_fields_refuse_a_change_and_take_the_rest(self):
        self.ok("POST", VOLUMES, volume("im-1", capability={"accessType": "mount"}))
        for field, spec in {"spec.nodeName": {"nodeName": "n2"},
                            "spec.name": {"name": "other"},
                            "spec.capability": {"capability": {"accessType": "block"}}}.items():
            code, got = self.call("PATCH", f"{VOLUMES}/im-1", {"spec": spec}, MERGE)
            self.assertEqual(code, 422, field)
            cause = got["details"]["causes"][0]
            self.assertEqual(cause["field"], field, got)
            self.assertIn(f"{field} is immutable", cause["message"])
        got = self.ok("PATCH", f"{VOLUMES}/im-1", {"spec": {"sizeBytes": 4096}}, MERGE)
        self.assertEqual(got["spec"]["nodeName"], "n1")
        self.assertEqual(got["spec"]["sizeBytes"], 4096)

    def test_unknown_fields_are_pruned(self):
        body = volume("pr-1", unknown="x", capability={"accessType": "mount", "extra": 1})
        body["surplus"] = {"a": 1}
        got = self.create("pr-1-unused") and self.ok("POST", VOLUMES, body)
        self.assertNotIn("surplus", got)
        self.assertNotIn("unknown", got["spec"])
        self.assertEqual(got["spec"]["capability"], {"accessType": "mount"})

    # -- the core kinds and the hooks -------------------------------------------------------

    def test_nodes_and_events(self):
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}}
        made_node = self.ok("POST", "/api/v1/nodes", node)
        self.assertEqual(made_node["spec"]["taints"],
                         [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}],
                         "TaintNodesByCondition taints every new Node not-ready")
        got = self.ok("PATCH", "/api/v1/nodes/node-a", {"spec": {"unschedulable": True}},
                      "application/strategic-merge-patch+json")
        self.assertTrue(got["spec"]["unschedulable"])
        event = {"apiVersion": "v1", "kind": "Event", "metadata": {"generateName": "bvol."},
                 "involvedObject": {"kind": "BerthVolume", "name": "v"}, "reason": "Made"}
        made = self.ok("POST", "/api/v1/namespaces/default/events", event)
        self.assertEqual(made["metadata"]["namespace"], "default")
        listed = self.ok("GET", "/api/v1/namespaces/default/events")
        self.assertEqual([e["reason"] for e in listed["items"]], ["Made"])
        code, _ = self.call("DELETE", f"/api/v1/namespaces/default/events/"
                                      f"{made['metadata']['name']}")
        self.assertEqual(code, 405, "events: create and list only")

    def test_an_event_about_a_cluster_scoped_object_lives_in_default(self):
        event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "bvol.1"},
                 "involvedObject": {"kind": "BerthVolume", "name": "v"}, "reason": "NodeGone"}
        code, got = self.call("POST", "/api/v1/namespaces/berth-system/events", event)
        self.assertEqual(code, 422, got)
        self.assertStatus(got, 422, "Invalid")
        self.assertEqual(got["message"], 'Event "bvol.1" is invalid: involvedObject.namespace: '
                                         'Invalid value: "": does not match event.namespace')
        self.assertEqual(self.ok("GET", "/api/v1/namespaces/berth-system/events")["items"], [])
        about_pod = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "pod.1"},
                     "involvedObject": {"kind": "Pod", "name": "p", "namespace": "apps"},
                     "reason": "Seen"}
        code, got = self.call("POST", "/api/v1/namespaces/default/events", about_pod)
        self.assertEqual(code, 422, "about a namespaced object: in its namespace only")
        self.ok("POST", "/api/v1/namespaces/apps/events", about_pod)

    def test_a_pruned_field_is_a_warning(self):
        conn = self.connection()
        body = volume("pw-1", unknown="x")
        conn.request("POST", VOLUMES, body=json.dumps(body).encode(),
                     headers=self.headers(**{"Content-Type": "application/json"}))
        r = conn.getresponse()
        r.read()
        conn.close()
        self.assertEqual(r.status, 201)
        self.assertEqual(r.headers.get_all("Warning"), ['299 - "unknown field \\"spec.unknown\\""'])

    def test_a_malformed_continue_token_is_400(self):
        code, got = self.call("GET", f"{VOLUMES}?limit=1&continue=not-a-token")
        self.assertEqual(code, 400, got)
        self.assertStatus(got, 400, "BadRequest")
        self.assertTrue(got["message"].startswith("invalid continue token: continue key is not "
                                                  "valid: "), got["message"])

    def test_counts_requests_per_verb_and_resource(self):
        before = self.ok("GET", "/standin/counts")
        self.create("cnt-1")
        self.ok("GET", f"{VOLUMES}/cnt-1")
        self.ok("PATCH", f"{VOLUMES}/cnt-1/status", {"status": {"phase": "Ready"}}, MERGE)
        after = self.ok("GET", "/standin/counts")
        for key in ("create berthvolumes", "get berthvolumes", "patch berthvolumes/status"):
            self.assertEqual(after.get(key, 0) - before.get(key, 0), 1, key)

    def test_kubectl_reads_it(self):
        kubectl = shutil.which("kubectl")
        if not kubectl:
            self.skipTest("kubectl is not installed")
        self.create("kc-1")
        config = os.path.join(self.dir, "kubeconfig")
        out = subprocess.run([kubectl, "--kubeconfig", config, "get", "berthvolumes", "-o",
                              "json"], capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("kc-1", [i["metadata"]["name"] for i in json.loads(out.stdout)["items"]])
        out = subprocess.run([kubectl, "--kubeconfig", config, "get", "bvol", "kc-1"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.split()[:8], ["NAME", "NODE", "SIZE", "CAPACITY", "PHASE",
                                                  "APPLIED", "MODIFICATIONS", "AGE"])
        # A change that failed: the Applied column (a JSONPath filter on the conditions)
        # says so, and -o wide adds its reason.
        self.ok("PATCH", f"{VOLUMES}/kc-1/status", {"status": {"phase": "Ready", "conditions": [
            {"type": "Ready", "status": "True", "reason": "Ready", "message": "",
             "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "Applied", "status": "False", "reason": "OutOfRange", "message": "too big",
             "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}, MERGE)
        out = subprocess.run([kubectl, "--kubeconfig", config, "get", "bvol", "kc-1", "-o",
                              "wide"], capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        header, row = out.stdout.splitlines()[:2]
        # kubectl aligns the cells under their column's name; an empty cell is blank.
        starts = [m.start() for m in re.finditer(r"\S+", header)]
        cells = {header[a:b].strip(): row[a:b].strip()
                 for a, b in zip(starts, starts[1:] + [None])}
        self.assertEqual((cells.get("PHASE"), cells.get("APPLIED"), cells.get("REASON")),
                         ("Ready", "False", "OutOfRange"), out.stdout)


def main():
    if yaml is None:
        print("SKIP: python3-yaml is missing (scripts/install-deps.sh --test installs it)")
        return SKIPPED
    if shutil.which("openssl") is None:
        print("SKIP: the openssl command is missing: the stand-in cannot make its certificates")
        return SKIPPED
    result = unittest.main(exit=False, verbosity=2).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
