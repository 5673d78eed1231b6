"""The objects, the global resourceVersion (one counter, every write takes the next, as
etcd's revision), and the history of changes a watch replays. Compaction drops the history,
so a watch from an older resourceVersion gets 410 Expired, as after etcd's compaction.

Every method takes the one lock; watches wait on its condition for the next change."""

import copy
import threading


class Change:
    """One write: its resourceVersion, the resource, ADDED/MODIFIED/DELETED, the object after
    it and before it (None for ADDED), so a watch can tell selector transitions."""

    def __init__(self, rv, res, kind, obj, old):
        self.rv = rv
        self.res = res
        self.kind = kind
        self.obj = obj
        self.old = old


class Store:
    def __init__(self):
        self.cond = threading.Condition()
        self.rv = 1
        self.compacted = 1
        self.objects = {}  # resource plural key -> {(namespace, name): object}
        self.history = []
        self.stalled = False
        self.counts = {}

    @staticmethod
    def key(res):
        return (res.group, res.plural)

    def count(self, verb, resource):
        with self.cond:
            k = f"{verb} {resource}"
            self.counts[k] = self.counts.get(k, 0) + 1

    def get(self, res, ns, name):
        with self.cond:
            obj = self.objects.get(self.key(res), {}).get((ns, name))
            return copy.deepcopy(obj)

    def items(self, res, ns):
        """Every object of res (in ns, when given), by namespace and name, and the
        resourceVersion they are current at."""
        with self.cond:
            found = self.objects.get(self.key(res), {})
            keys = sorted(k for k in found if ns is None or k[0] == ns)
            return [copy.deepcopy(found[k]) for k in keys], self.rv

    def write(self, res, kind, obj, old):
        """Store obj (DELETED removes it) at the next resourceVersion; returns a copy of it."""
        with self.cond:
            self.rv += 1
            obj = copy.deepcopy(obj)
            obj["metadata"]["resourceVersion"] = str(self.rv)
            meta = obj["metadata"]
            place = self.objects.setdefault(self.key(res), {})
            where = (meta.get("namespace", ""), meta["name"])
            if kind == "DELETED":
                place.pop(where, None)
            else:
                place[where] = obj
            self.history.append(Change(self.rv, res, kind, obj, copy.deepcopy(old)))
            self.cond.notify_all()
            return copy.deepcopy(obj)

    def compact(self):
        """Forget the history: a watch must now start from the current resourceVersion."""
        with self.cond:
            self.history = []
            self.compacted = self.rv
            self.cond.notify_all()
            return self.rv

    def changes_after(self, rv):
        """The changes after rv, or None when the history no longer reaches back to rv.
        The caller holds self.cond, so the answer and self.rv agree."""
        if rv < self.compacted:
            return None
        return [c for c in self.history if c.rv > rv]

    def set_stalled(self, stalled):
        with self.cond:
            self.stalled = stalled
            self.cond.notify_all()
