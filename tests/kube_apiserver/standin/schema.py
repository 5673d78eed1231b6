"""A CRD's openAPIV3Schema applied as a real API server applies a structural schema: unknown
fields pruned (not refused), then types, formats, enums, required and minimum checked, each
failure one cause naming its field path, in the words of the real server's validator.

Of the CEL rules (x-kubernetes-validations) it evaluates one, the transition rule
`self == oldSelf` that makes a field immutable; a CRD with any other rule is refused when
it is loaded, since the stand-in could not hold a write to it."""

import json
import re

_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_INT64 = (-(2 ** 63), 2 ** 63 - 1)
_INT32 = (-(2 ** 31), 2 ** 31 - 1)
# What the server keeps at the top whatever the schema says.
_TOP = {"apiVersion", "kind", "metadata"}


def prune(schema, value, top=True, path="", pruned=None):
    """Drop the fields the schema does not name, in place, adding the path of each to
    pruned (a list, or None); returns value."""
    if not isinstance(schema, dict) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return value
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key in list(value):
            if top and key in _TOP:
                continue
            sub_path = f"{path}.{key}" if path else key
            if props is not None and key in props:
                prune(props[key], value[key], False, sub_path, pruned)
            elif isinstance(extra, dict):
                prune(extra, value[key], False, sub_path, pruned)
            elif props is not None or extra is None:
                del value[key]
                if pruned is not None:
                    pruned.append(sub_path)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            prune(schema["items"], item, False, f"{path}[{i}]", pruned)
    return value


def _shown(value):
    return json.dumps(value)


def _type_ok(kind, value):
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return True


def _invalid(path, value, text):
    return {"reason": "FieldValueInvalid", "message": f"Invalid value: {_shown(value)}: {text}",
            "field": path}


def validate(schema, value, path=""):
    """The causes (reason, message, field) of every way value fails schema; [] when none."""
    if not isinstance(schema, dict):
        return []
    kind = schema.get("type")
    if value is None:
        if schema.get("nullable"):
            return []
        return [_invalid(path, value, f"{path} in body must be of type {kind}: \"null\"")]
    if kind and not _type_ok(kind, value):
        got = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
               float: "number"}.get(type(value), "unknown")
        return [_invalid(path, got, f"{path} in body must be of type {kind}: {_shown(got)}")]
    causes = []
    if "enum" in schema and value not in schema["enum"]:
        supported = ", ".join(_shown(e) for e in schema["enum"])
        causes.append({"reason": "FieldValueNotSupported", "field": path,
                       "message": f"Unsupported value: {_shown(value)}: supported values: "
                                  f"{supported}"})
    fmt = schema.get("format")
    if kind == "integer" and fmt in ("int64", "int32"):
        low, high = _INT64 if fmt == "int64" else _INT32
        if not low <= value <= high:
            causes.append(_invalid(path, value, f"{path} in body must be of type {fmt}"))
    if kind == "string" and fmt == "date-time" and not _DATE_TIME.match(value):
        causes.append(_invalid(path, value, f"{path} in body must be of type date-time: "
                                            f"{_shown(value)}"))
    if "minimum" in schema and kind in ("integer", "number") and value < schema["minimum"]:
        causes.append(_invalid(path, value, f"{path} in body should be greater than or equal "
                                            f"to {schema['minimum']}"))
    if "maximum" in schema and kind in ("integer", "number") and value > schema["maximum"]:
        causes.append(_invalid(path, value, f"{path} in body should be less than or equal "
                                            f"to {schema['maximum']}"))
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                causes.append({"reason": "FieldValueRequired", "message": "Required value",
                               "field": f"{path}.{key}" if path else key})
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, sub in value.items():
            sub_path = f"{path}.{key}" if path else key
            if key in props:
                causes += validate(props[key], sub, sub_path)
            elif isinstance(extra, dict):
                causes += validate(extra, sub, sub_path)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            causes += validate(schema["items"], item, f"{path}[{i}]")
    return causes


def check(schema, obj, pruned=None):
    """Prune obj in place (each pruned path added to pruned), then the causes of every
    failure (metadata is the server's own)."""
    prune(schema, obj, pruned=pruned)
    body = {k: v for k, v in obj.items() if k != "metadata"}
    sub = dict(schema)
    sub["properties"] = {k: v for k, v in (schema.get("properties") or {}).items()
                         if k != "metadata"}
    return validate(sub, body)


IMMUTABLE = "self == oldSelf"


def rules_supported(schema, path="schema"):
    """Raises ValueError naming the first CEL rule the stand-in cannot evaluate."""
    if not isinstance(schema, dict):
        return
    for rule in schema.get("x-kubernetes-validations") or []:
        if rule.get("rule") != IMMUTABLE:
            raise ValueError(f"{path}: the stand-in evaluates only the CEL rule "
                             f"{IMMUTABLE!r}, not {rule.get('rule')!r}")
    for key, sub in (schema.get("properties") or {}).items():
        rules_supported(sub, f"{path}.{key}")
    if isinstance(schema.get("items"), dict):
        rules_supported(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        rules_supported(schema["additionalProperties"], f"{path}.*")


def transition_causes(schema, new, old, path=""):
    """The causes of every immutable field an update changes. As on a real server, a
    transition rule holds only where the old object had the field too."""
    if not isinstance(schema, dict) or new is None or old is None:
        return []
    causes = []
    for rule in schema.get("x-kubernetes-validations") or []:
        if rule.get("rule") == IMMUTABLE and new != old:
            got = {dict: "object", list: "array", str: "string", bool: "boolean",
                   int: "integer", float: "number"}.get(type(new), "unknown")
            causes.append(_invalid(path, got, rule.get("message") or f"failed rule: {IMMUTABLE}"))
    if isinstance(new, dict) and isinstance(old, dict):
        for key, sub in (schema.get("properties") or {}).items():
            sub_path = f"{path}.{key}" if path else key
            causes += transition_causes(sub, new.get(key), old.get(key), sub_path)
    return causes
