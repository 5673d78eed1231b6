"""The Status objects of a real API server (metav1.Status), and ApiError, which carries one
from wherever a request is refused to the HTTP handler."""


def status(code, reason, message, details=None):
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}
    if details is not None:
        body["details"] = details
    return body


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code = code
        self.body = status(code, reason, message, details)


def _details(res, name, **more):
    d = {"name": name}
    if res.group:
        d["group"] = res.group
    d["kind"] = res.plural
    d.update(more)
    return d


def not_found(res, name):
    return ApiError(404, "NotFound", f'{res.qualified} "{name}" not found', _details(res, name))


def already_exists(res, name):
    return ApiError(409, "AlreadyExists", f'{res.qualified} "{name}" already exists',
                    _details(res, name))


def conflict(res, name):
    return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {res.qualified} "{name}": '
                    "the object has been modified; please apply your changes to the latest "
                    "version and try again", _details(res, name))


def invalid(res, name, causes, by_resource=False):
    """422 Invalid as field.ErrorList.ToAggregate() words it: one cause alone, several in [].
    A validation failure names the kind (BerthVolume.berth.csi.dev); the generic store's own
    check of a missing resourceVersion names the resource (berthvolumes.berth.csi.dev)."""
    texts = [f"{c['field']}: {c['message']}" for c in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    if by_resource:
        kind, detail_kind = res.qualified, res.plural
    else:
        kind, detail_kind = (f"{res.kind}.{res.group}" if res.group else res.kind), res.kind
    details = {"name": name}
    if res.group:
        details["group"] = res.group
    details["kind"] = detail_kind
    details["causes"] = causes
    return ApiError(422, "Invalid", f'{kind} "{name}" is invalid: {joined}', details)


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def unsupported_media_type(accepted):
    return ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown "
                    f"format - accepted media types include: {', '.join(accepted)}")


def method_not_allowed(method):
    return ApiError(405, "MethodNotAllowed", f"the server does not allow this method on the "
                    f"requested resource ({method})")


def expired(message):
    return ApiError(410, "Expired", message)


def unauthorized():
    return ApiError(401, "Unauthorized", "Unauthorized")
