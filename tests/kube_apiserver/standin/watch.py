"""A watch as the real watch cache serves one: synthetic ADDED events for what exists when
no resourceVersion (or "0") is given, else every change after it; an object that starts or
stops matching the selectors sent as ADDED or DELETED; BOOKMARKs when asked for; a single
ERROR event with a 410 Expired Status when the history no longer reaches back; the stream
ends at timeoutSeconds. A stall (the test hook) makes every watch silent but open."""

import time

from .errors import status
from .selectors import fields_match, labels_match

TICK = 0.1  # how often a waiting watch looks at the clock and at the stall flag


def _transition(change, match):
    if change.kind == "ADDED":
        return "ADDED" if match(change.obj) else None
    if change.kind == "DELETED":
        return "DELETED" if match(change.old) else None
    was, now = match(change.old), match(change.obj)
    if was and now:
        return "MODIFIED"
    if was:
        return "DELETED"
    return "ADDED" if now else None


def _expired(rv, oldest):
    return {"type": "ERROR", "object": status(410, "Expired",
                                              f"too old resource version: {rv} ({oldest})")}


def stream(store, res, ns, labels, fields, rv, bookmarks, timeout, bookmark_interval, send):
    """Send the watch's events through send(event) until the timeout or a send fails."""
    def match(obj):
        if obj is None:
            return False
        if ns is not None and obj["metadata"].get("namespace") != ns:
            return False
        return labels_match(labels, obj) and fields_match(fields, obj)

    deadline = time.monotonic() + timeout
    with store.cond:
        if rv in (None, "", "0"):
            items, cursor = store.items(res, ns)
            first = [{"type": "ADDED", "object": i} for i in items if match(i)]
        elif store.changes_after(int(rv)) is None:
            first, cursor = [_expired(rv, store.compacted)], None
        else:
            first, cursor = [], int(rv)
    for event in first:
        send(event)
    if cursor is None:
        return
    next_bookmark = time.monotonic() + bookmark_interval
    while True:
        with store.cond:
            while True:
                clock = time.monotonic()
                if store.stalled:
                    store.cond.wait(TICK)
                    continue
                if clock >= deadline:
                    return
                changes = store.changes_after(cursor)
                if changes is None or changes or (bookmarks and clock >= next_bookmark):
                    break
                store.cond.wait(min(TICK, deadline - clock))
            if changes is None:
                send_now = [_expired(cursor, store.compacted)]
            else:
                send_now = []
                for c in changes:
                    if c.res is not res:
                        continue
                    kind = _transition(c, match)
                    if kind:
                        send_now.append({"type": kind, "object": c.obj})
                cursor = store.rv
        for event in send_now:
            send(event)
        if changes is None:
            return
        if bookmarks and time.monotonic() >= next_bookmark:
            send({"type": "BOOKMARK", "object": {
                "kind": res.kind, "apiVersion": res.api_version,
                "metadata": {"resourceVersion": str(cursor)}}})
            next_bookmark = time.monotonic() + bookmark_interval
