"""create, get, list, update, patch and delete, with the rules a real server holds a write
to: resourceVersion preconditions, the status subresource, generation, finalizers and
deletionTimestamp, and the CRD's schema. Each returns (HTTP code, body) or raises ApiError."""

import base64
import copy
import json
import random
import time
import uuid

from . import errors
from .admission import admit_create
from .patch import json_patch, merge_patch
from .schema import check, transition_causes
from .selectors import fields_match, labels_match

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
# What the stand-in applies to a custom resource; a real server adds apply-patch+yaml.
CUSTOM_PATCHES = [JSON_PATCH, MERGE]
# metadata fields only the server sets; what a client sends for them is replaced.
_SERVER_META = ("uid", "creationTimestamp", "generation", "deletionTimestamp",
                "deletionGracePeriodSeconds", "resourceVersion")
_GENERATED = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet of k8s.io/apimachinery's rand


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _content(obj, status_subresource):
    """What generation counts: everything but metadata (and status, with the subresource)."""
    skip = {"metadata", "status"} if status_subresource else {"metadata"}
    return {k: v for k, v in obj.items() if k not in skip}


def _typed(res, body):
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request is not a JSON object")
    for field, want in (("kind", res.kind), ("apiVersion", res.api_version)):
        got = body.setdefault(field, want)
        if got != want:
            raise errors.bad_request(f"the {field} of the object ({got}) does not match the "
                                     f"{field} of the request ({want})")
    if not isinstance(body.setdefault("metadata", {}), dict):
        raise errors.bad_request("metadata is not an object")
    return body


def _validate(res, name, obj, warnings):
    """Prunes and checks obj against the schema; a pruned field is a warning, worded as the
    server's (fieldValidation=Warn, its default: customresource_handler.go)."""
    if res.schema is None:
        return
    pruned = []
    causes = check(res.schema, obj, pruned)
    warnings += [f'unknown field "{path}"' for path in pruned]
    if causes:
        raise errors.invalid(res, name, causes)


def create(store, res, ns, body, warnings):
    body = _typed(res, body)
    meta = body["metadata"]
    if res.namespaced:
        if meta.setdefault("namespace", ns) != ns:
            raise errors.bad_request("the namespace of the provided object does not match the "
                                     "namespace sent on the request")
    else:
        meta.pop("namespace", None)
    if not meta.get("name"):
        prefix = meta.get("generateName")
        if not prefix:
            raise errors.invalid(res, "", [{"reason": "FieldValueRequired",
                                            "message": "Required value: name or generateName "
                                                       "is required",
                                            "field": "metadata.name"}])
        meta["name"] = prefix + "".join(random.choice(_GENERATED) for _ in range(5))
    name = meta["name"]
    if res.status_subresource:
        body.pop("status", None)  # create cannot set status, as on a real server
    body = admit_create(res, ns, body)
    _validate(res, name, body, warnings)
    for field in _SERVER_META:
        meta.pop(field, None)
    meta["uid"] = str(uuid.uuid4())
    meta["creationTimestamp"] = now()
    if res.custom:
        meta["generation"] = 1
    with store.cond:
        if store.get(res, ns or "", name) is not None:
            raise errors.already_exists(res, name)
        return 201, store.write(res, "ADDED", body, None)


def get(store, res, ns, name):
    obj = store.get(res, ns or "", name)
    if obj is None:
        raise errors.not_found(res, name)
    return 200, obj


def _token(rv, after):
    return base64.urlsafe_b64encode(json.dumps({"rv": rv, "start": after}).encode()).decode()


def list_(store, res, ns, labels, fields, limit, cont):
    items, rv = store.items(res, ns)
    after = None
    if cont:
        try:
            state = json.loads(base64.urlsafe_b64decode(cont.encode()))
            rv, after = int(state["rv"]), state["start"]
        except (ValueError, KeyError, TypeError) as e:
            # kube-apiserver v1.32.13: "invalid continue token: continue key is not valid:
            # illegal base64 data at input byte 12" (docs/kubernetes-api.md).
            raise errors.bad_request(f"invalid continue token: continue key is not valid: {e}")
        if rv < store.compacted:
            raise errors.expired("The provided continue parameter is too old to display a "
                                 "consistent list result. You can start a new list without "
                                 "the continue parameter.")
    keyed = [(f"{i['metadata'].get('namespace', '')}/{i['metadata']['name']}", i) for i in items]
    chosen = [(k, i) for k, i in keyed if (after is None or k > after)
              and labels_match(labels, i) and fields_match(fields, i)]
    meta = {"resourceVersion": str(rv)}
    if limit and len(chosen) > limit:
        chosen = chosen[:limit]
        meta["continue"] = _token(rv, chosen[-1][0])
    return 200, {"kind": f"{res.kind}List", "apiVersion": res.api_version, "metadata": meta,
                 "items": [i for _, i in chosen]}


def _new_finalizers(old, new):
    before = set(old["metadata"].get("finalizers") or [])
    return [f for f in new["metadata"].get("finalizers") or [] if f not in before]


def _commit(store, res, name, old, new, subresource, warnings):
    """Write new over old as PUT would, old and new already of the same resourceVersion."""
    if subresource == "status":
        merged = copy.deepcopy(old)
        if "status" in new:
            merged["status"] = new["status"]
        else:
            merged.pop("status", None)
        new = merged
    else:
        if res.status_subresource:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        meta = new["metadata"]
        for field in _SERVER_META:
            if field in old["metadata"]:
                meta[field] = old["metadata"][field]
            else:
                meta.pop(field, None)
        for field in ("name", "namespace"):
            if field in old["metadata"]:
                meta[field] = old["metadata"][field]
    deleting = "deletionTimestamp" in old["metadata"]
    added = _new_finalizers(old, new) if deleting else []
    if added:
        shown = "[]string{" + ", ".join(json.dumps(f) for f in added) + "}"
        raise errors.invalid(res, name, [{
            "reason": "FieldValueForbidden", "field": "metadata.finalizers",
            "message": "Forbidden: no new finalizers can be added if the object is being "
                       f"deleted, found new finalizers {shown}"}])
    _validate(res, name, new, warnings)
    if res.schema is not None:
        causes = transition_causes(res.schema, new, old)
        if causes:
            raise errors.invalid(res, name, causes)
    if res.custom and _content(new, res.status_subresource) != \
            _content(old, res.status_subresource):
        new["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
    if new == old:
        return 200, old  # a real server writes nothing for a no-op, nor sends an event
    if deleting and not new["metadata"].get("finalizers"):
        return 200, store.write(res, "DELETED", new, old)
    return 200, store.write(res, "MODIFIED", new, old)


def update(store, res, ns, name, body, subresource, warnings):
    body = _typed(res, body)
    meta = body["metadata"]
    if meta.get("name") != name:
        raise errors.bad_request(f"the name of the object ({meta.get('name')}) does not match "
                                 f"the name on the URL ({name})")
    with store.cond:
        old = store.get(res, ns or "", name)
        if old is None:
            raise errors.not_found(res, name)
        rv = meta.get("resourceVersion")
        if not rv:
            if res.custom:  # custom resources never allow an unconditional update
                raise errors.invalid(res, name, [{
                    "reason": "FieldValueInvalid", "field": "metadata.resourceVersion",
                    "message": "Invalid value: 0x0: must be specified for an update"}],
                    by_resource=True)
        elif rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(res, name)
        meta["resourceVersion"] = old["metadata"]["resourceVersion"]
        return _commit(store, res, name, old, body, subresource, warnings)


def patch(store, res, ns, name, content_type, raw, subresource, warnings):
    kind = (content_type or "").split(";")[0].strip()
    if kind == STRATEGIC and not res.custom:
        kind = MERGE  # core kinds: applied as a merge patch, without list merge keys
    if kind not in (MERGE, JSON_PATCH):
        accepted = CUSTOM_PATCHES if res.custom else CUSTOM_PATCHES + [STRATEGIC]
        raise errors.unsupported_media_type(accepted)
    try:
        doc = json.loads(raw or b"null")
    except ValueError as e:
        raise errors.bad_request(f"error decoding patch: {e}")
    with store.cond:
        old = store.get(res, ns or "", name)
        if old is None:
            raise errors.not_found(res, name)
        try:
            new = merge_patch(old, doc) if kind == MERGE else json_patch(old, doc)
        except (ValueError, KeyError, TypeError, IndexError) as e:
            raise errors.ApiError(422, "Invalid", f"the server rejected our request due to an "
                                  f"error in our request: {e}")
        new = _typed(res, new)
        rv = new["metadata"].get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(res, name)
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        return _commit(store, res, name, old, new, subresource, warnings)


def delete(store, res, ns, name):
    with store.cond:
        old = store.get(res, ns or "", name)
        if old is None:
            raise errors.not_found(res, name)
        meta = old["metadata"]
        if "deletionTimestamp" in meta:
            return 200, old
        if meta.get("finalizers"):
            new = copy.deepcopy(old)
            new["metadata"]["deletionTimestamp"] = now()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            return 200, store.write(res, "MODIFIED", new, old)
        store.write(res, "DELETED", old, old)
        details = {"name": name, "kind": res.plural, "uid": meta["uid"]}
        if res.group:
            details["group"] = res.group
        return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                     "details": details}
