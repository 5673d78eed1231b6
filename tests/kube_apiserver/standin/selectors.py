"""Label selectors (=, ==, !=, in, notin, exists, !key) and the field selector
metadata.name=, as a list or watch reads them. A selector that does not parse is refused
400, as a real server refuses it."""

import re

from .errors import bad_request

_SET = re.compile(r"^\s*(!?)([A-Za-z0-9./_-]+)\s*(?:(in|notin)\s*\(([^)]*)\)|(==|=|!=)\s*"
                  r"([A-Za-z0-9._-]*))?\s*$")


def _split(text):
    """Split at the commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def parse_labels(text):
    """A list of requirements (key, op, values); an empty selector matches everything."""
    reqs = []
    for part in _split(text or ""):
        m = _SET.match(part)
        if not m:
            raise bad_request(f'unable to parse requirement: invalid label selector "{part}"')
        neg, key, set_op, set_values, op, value = m.groups()
        if neg and (set_op or op):
            raise bad_request(f'unable to parse requirement: "{part}"')
        if neg:
            reqs.append((key, "!", ()))
        elif set_op:
            reqs.append((key, set_op, tuple(v.strip() for v in set_values.split(",") if v.strip())))
        elif op:
            reqs.append((key, "!=" if op == "!=" else "=", (value,)))
        else:
            reqs.append((key, "exists", ()))
    return reqs


def labels_match(reqs, obj):
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for key, op, values in reqs:
        has = key in labels
        if op == "exists" and not has:
            return False
        if op == "!" and has:
            return False
        if op in ("=", "in") and (not has or labels[key] not in values):
            return False
        if op in ("!=", "notin") and has and labels[key] in values:
            return False
    return True


def parse_fields(text):
    """Only metadata.name= (and ==, !=): what berthd's watches use; others are refused."""
    reqs = []
    for part in _split(text or ""):
        m = re.match(r"^\s*([A-Za-z.]+)\s*(==|=|!=)\s*(.*?)\s*$", part)
        if not m or m.group(1) not in ("metadata.name", "metadata.namespace"):
            raise bad_request(f'"{part}" is not a known field selector: only "metadata.name", '
                              '"metadata.namespace"')
        reqs.append((m.group(1).split(".")[1], m.group(2) != "!=", m.group(3)))
    return reqs


def fields_match(reqs, obj):
    meta = obj.get("metadata") or {}
    return all((meta.get(field, "") == value) == equal for field, equal, value in reqs)
