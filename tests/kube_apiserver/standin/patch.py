"""The two patch formats a real server applies to a custom resource: JSON merge patch
(RFC 7386) and JSON patch (RFC 6902). A JSON patch that cannot apply is the caller's error
(ValueError, which the handler answers 422 as a real server does)."""

import copy


def merge_patch(target, patch):
    """RFC 7386: objects merge key by key, null removes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc, parts):
    node = doc
    for p in parts[:-1]:
        if isinstance(node, list):
            node = node[_index(node, p, False)]
        elif isinstance(node, dict) and p in node:
            node = node[p]
        else:
            raise ValueError(f"path /{'/'.join(parts)}: {p!r} does not exist")
    return node


def _index(node, p, adding):
    if adding and p == "-":
        return len(node)
    if not p.isdigit():
        raise ValueError(f"invalid array index {p!r}")
    i = int(p)
    if i > len(node) or (not adding and i == len(node)):
        raise ValueError(f"array index {i} out of range")
    return i


def _get(doc, parts):
    if not parts:
        return doc
    parent = _parent(doc, parts)
    last = parts[-1]
    if isinstance(parent, list):
        return parent[_index(parent, last, False)]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    raise ValueError(f"path /{'/'.join(parts)} does not exist")


def _remove(doc, parts):
    parent = _parent(doc, parts)
    last = parts[-1]
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, False))
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    raise ValueError(f"path /{'/'.join(parts)} does not exist")


def _add(doc, parts, value):
    if not parts:
        return value
    parent = _parent(doc, parts)
    last = parts[-1]
    if isinstance(parent, list):
        parent.insert(_index(parent, last, True), value)
    elif isinstance(parent, dict):
        parent[last] = value
    else:
        raise ValueError(f"path /{'/'.join(parts)}: the parent is not a container")
    return doc


def json_patch(target, ops):
    """RFC 6902: add, remove, replace, move, copy, test, in order, all or nothing."""
    if not isinstance(ops, list):
        raise ValueError("a JSON patch is a list of operations")
    doc = copy.deepcopy(target)
    for op in ops:
        kind = op.get("op")
        parts = _pointer(op.get("path", ""))
        if kind == "add":
            doc = _add(doc, parts, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(doc, parts)
        elif kind == "replace":
            _get(doc, parts)
            if not parts:
                doc = copy.deepcopy(op["value"])
            else:
                _remove(doc, parts)
                doc = _add(doc, parts, copy.deepcopy(op["value"]))
        elif kind in ("move", "copy"):
            source = _pointer(op.get("from", ""))
            value = _get(doc, source) if kind == "copy" else _remove(doc, source)
            doc = _add(doc, parts, copy.deepcopy(value))
        elif kind == "test":
            if _get(doc, parts) != op.get("value"):
                raise ValueError(f"testing value {op.get('path')} failed")
        else:
            raise ValueError(f"unknown JSON patch operation {kind!r}")
    return doc
