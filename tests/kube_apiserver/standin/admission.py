"""What a real API server does to a create of a core kind, besides storing it: the
TaintNodesByCondition admission plugin (on by default) taints every new Node not-ready, and
the Event validation holds an Event's namespace to its involved object's
(docs/kubernetes-api.md, "Events" and "Nodes", with the server's source for each)."""

from . import errors

NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


def admit_create(res, ns, body):
    """body as the server stores it, or an ApiError."""
    if res.group == "" and res.plural == "nodes":
        taints = body.setdefault("spec", {}).setdefault("taints", [])
        if not any(t.get("key") == NOT_READY["key"] and t.get("effect") == NOT_READY["effect"]
                   for t in taints):
            taints.append(dict(NOT_READY))
    if res.group == "" and res.plural == "events":
        _check_event(res, ns, body)
    return body


def _check_event(res, ns, body):
    # pkg/apis/core/validation/events.go, legacyValidateEvent. An Event without eventTime
    # (the core/v1 shape berthd writes) about a cluster-scoped object (no
    # involvedObject.namespace) must live in "default" (or no namespace, which a namespaced
    # resource's path cannot name); about a namespaced one, in that object's namespace. An
    # Event with eventTime may also live in kube-system.
    involved = body.get("involvedObject") or {}
    involved_ns = involved.get("namespace") or ""
    if not body.get("eventTime"):
        ok = ns == "default" if not involved_ns else ns == involved_ns
    else:
        ok = ns in ("default", "kube-system") if not involved_ns else True
    if not ok:
        name = (body.get("metadata") or {}).get("name", "")
        raise errors.invalid(res, name, [{
            "reason": "FieldValueInvalid", "field": "involvedObject.namespace",
            "message": f'Invalid value: "{involved_ns}": does not match event.namespace'}])
