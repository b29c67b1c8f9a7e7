"""What was seen, kept as shapes: field names, JSON types, guessed formats, statuses,
content types and a few headers of every answer, never a value.

A *shape* is a JSON object: ``n`` (values seen), ``types`` and ``formats`` (how many of
each), ``example`` (one string masked: each run of letters is ``a``, of digits ``9``, so
``PO-ACCT-1-00042`` is ``a-a-9-9``), ``fields`` (the shape of each field of the objects
seen), ``items`` (of the arrays' items) and, for ``--enums`` only, ``values`` (the few
short words a string field took, never of a field named like an identifier, a name, a
code or a secret). An :class:`Observation` keeps, by answer (``"GET /shipments 200"``),
how many were seen, their content types, a few headers (counted; the value of
``www-authenticate``, ``retry-after`` and the rate-limit headers as a form: numbers are
``9``, quoted strings ``"..."`` but RFC 6750's error codes) and the shape of the bodies.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

import httpx

from service_api_spec import Operation, Spec, is_json

Shape = dict[str, Any]

#: The format guessed for a string: the first that matches it whole, else ``text``.
FORMATS = {
    "date-time": re.compile(
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?"
        r"([Zz]|[+-][0-9]{2}:?[0-9]{2})"
    ),
    "date": re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"),
    "uuid": re.compile(r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"),
    "uri": re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+"),
    "email": re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+"),
    "integer": re.compile(r"-?[0-9]{1,18}"),
}
# The bounds of a shape: what a huge or hostile answer can make it hold.
MAX_DEPTH = 8
MAX_FIELDS = 200
MAX_ITEMS = 50
MAX_KEPT = 5  # header forms, and (plus 4) words of a field
_TYPES = {type(None): "null", bool: "boolean", int: "integer", float: "number"}
_TYPES |= {str: "string", list: "array"}
# Headers kept: their names; for the first group, a form of the value too.
_HEADERS = re.compile(
    r"(www-authenticate|retry-after|.*rate-?limit.*)|.*(request|correlation)-?id"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z _-]{0,31}")
_CODES = {"invalid_request", "invalid_token", "insufficient_scope"}  # RFC 6750's
_NOT_WORDS = re.compile(
    r"(?i).*(id|token|secret|password|key|name|email|number|code|ur[il])"
)


class SpecCheckError(ValueError):
    """The check cannot be made or written: a budget too small to see one page, a spec
    file changed since the check started, an observation file that is not one.

    Example::

        try:
            report.write()
        except SpecCheckError as exc:
            print(exc)  # openapi.yaml changed since the check started: check again
    """


def add(shape: Shape, value: Any, words: bool = False, depth: int = 0) -> None:
    """Add the shape of ``value`` to ``shape``; ``words``: keep short words (``--enums``).

    Example::

        add(shape := {}, {"status": "Planned"})  # shape["fields"]["status"]["n"] == 1
    """
    kind = _TYPES.get(type(value), "object")
    merge(shape, {"n": 1, "types": {kind: 1}})
    if kind == "string":
        form = next((n for n, f in FORMATS.items() if f.fullmatch(value)), "text")
        masked = re.sub(r"[0-9]+", "9", re.sub(r"[^\W\d_]+", "a", value[:64]))
        merge(shape, {"formats": {form: 1}, "example": masked[:24]})
        known = shape.setdefault("values", {}) if words else {}
        if words and _WORD.fullmatch(value) and len(known | {value: 1}) <= MAX_KEPT + 4:
            merge(known, {value: 1})
    if depth > MAX_DEPTH:
        return
    if kind == "object":
        fields = shape.setdefault("fields", {})
        for name, item in value.items():
            if name not in fields and len(fields) >= MAX_FIELDS:
                continue
            keep = words and not _NOT_WORDS.fullmatch(name)
            add(fields.setdefault(name, {}), item, keep, depth + 1)
    for item in value[:MAX_ITEMS] if kind == "array" else ():
        add(shape.setdefault("items", {}), item, words, depth + 1)


def merge(into: Shape, shape: Shape) -> Shape:
    """``into`` with ``shape`` added to it: counts summed, nested shapes merged.

    Example::

        merge({"n": 1, "types": {"string": 1}}, {"n": 2, "types": {"null": 2}})
    """
    for key, value in shape.items():
        if isinstance(value, dict):
            merge(into.setdefault(key, {}), value)
        elif isinstance(value, int):
            into[key] = into.get(key, 0) + value
        else:
            into.setdefault(key, value)
    return into


class Matcher:
    """Finds the operation of an answer by its method and its path under the base URL.

    Example::

        key, operation = Matcher(spec, base_url)(response)  # "GET /shipments 200", ...
    """

    def __init__(self, spec: Spec, base_url: str | httpx.URL) -> None:
        self.base = re.escape(httpx.URL(str(base_url)).path.rstrip("/"))
        # Literal paths first: /things/search is not /things/{thingId}.
        ordered = sorted(spec.operations, key=lambda op: ("{" in op.path, op.path))
        self.routes = [
            (re.sub(r"\\\{[^/]*?\\\}", "[^/]+", re.escape(o.path)), o) for o in ordered
        ]

    def __call__(self, response: httpx.Response) -> tuple[str, Operation] | None:
        """The answer's key and operation, or None for an answer of no operation."""
        method, path = response.request.method, response.request.url.path
        for pattern, op in self.routes:
            if op.method == method and re.fullmatch(self.base + pattern, path):
                return f"{method} {op.path} {response.status_code}", op
        return None


class Observation:
    """Shapes of answers seen (see the module docstring); ``data`` is JSON as is.

    Example::

        observation = Observation.load("observed.json")
        observation.data["answers"]["GET /shipments 200"]["body"]["fields"]
    """

    def __init__(self, data: Shape | None = None) -> None:
        self.data: Shape = {"answers": {}, "facts": {}, "requests": 0, **(data or {})}

    def record(
        self,
        found: tuple[str, Operation],
        response: httpx.Response,
        words: bool = False,
    ) -> None:
        """Add the shape of ``response``, whose body was read, the answer ``found``.

        Example::

            observation.record(("GET /shipments 200", operation), response)
        """
        key, op = found
        body = response.content  # first: an unread body raises before anything is kept
        media = response.headers.get("content-type", "") if body else ""
        media = media.partition(";")[0].strip().lower()
        answer = self.data["answers"].setdefault(key, {"headers": {}})
        merge(answer, {"n": 1, "media": {media: 1}})
        declared = {name for a in op.answers.values() for name in a.headers}
        for name, value in response.headers.items():
            shown = _HEADERS.fullmatch(name)
            if shown or name in declared:
                seen = answer["headers"].setdefault(name, {"forms": []})
                merge(seen, {"n": 1})
                quoted = re.sub(
                    r'"([^"]*)"', lambda m: m[0] if m[1] in _CODES else '"..."', value
                )
                form = re.sub(r"[0-9]+", "9", quoted)[:80]
                if shown and shown[1] and form not in seen["forms"][:MAX_KEPT]:
                    seen["forms"] = [*seen["forms"], form][:MAX_KEPT]
        if is_json(media):
            # A body that is not JSON: its content type says what it claimed.
            with contextlib.suppress(ValueError, RecursionError):
                add(answer.setdefault("body", {}), json.loads(body), words)

    def dump(self, path: str | Path) -> None:
        """Write to ``path`` as JSON, whole or not at all (a file beside it, renamed)."""
        part = Path(f"{path}.part")
        part.write_text(json.dumps(self.data, indent=1, sort_keys=True), "utf-8")
        os.replace(part, path)

    @classmethod
    def load(cls, path: str | Path) -> Observation:
        """The observation written at ``path``; :class:`SpecCheckError` if it is none.

        Example::

            Observation.load("observed.json").data["requests"]
        """
        try:
            data = json.loads(Path(path).read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise SpecCheckError(f"{path}: cannot be read as JSON ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("answers"), dict):
            raise SpecCheckError(f"{path}: not an observation file of service-api")
        return cls(data)
