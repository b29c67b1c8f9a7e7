"""What was seen, kept as shapes: field names, JSON types, guessed formats, statuses,
content types and a few headers of every answer, never a value.

A *shape* is a JSON object: ``n`` (values seen), ``types`` and ``formats`` (how many of
each), ``example`` (one string masked: each run of letters is ``a``, of digits ``9``, so
``PO-ACCT-1-00042`` is ``a-a-9-9``), ``fields`` (the shape of each field of the objects
seen), ``items`` (of the arrays' items) and, for ``--enums`` only, ``values`` (the few
short words a string field took, never of a field named like an identifier, a name, a
code or a secret). An :class:`Observation` keeps, by answer (``"GET /shipments 200"``),
how many were seen, their content types, a few headers (the value of
``www-authenticate``, ``retry-after`` and the rate-limit headers as a form: numbers are
``9``, quoted strings ``"..."`` but RFC 6750's error codes) and the shape of the bodies.
The live sample and ``Client(observe=...)`` both write one; the comparison reads it.

Passive learning: ``Client(observe=PATH)`` calls an :class:`Observer` with every answer
whose body it has read. It samples (every answer of an operation and status up to
``SAMPLED``, then one in ``SAMPLE_EVERY``), writes the file with the first answer, then
at most every ``SAVE_EVERY`` seconds, and when the program ends; an existing one is
added to. ``service-api spec check --from PATH`` then reports on it and patches the spec.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import math
import os
import re
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from service_api_spec import Operation, Spec, is_json, load_spec

Shape = dict[str, Any]

#: The format guessed for a string: the first that matches it whole, else ``text``. The
#: comparison judges the spec's formats by the same patterns.
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
#: The JSON type of a value read by ``json.loads``; in this order, the patch writes them.
_KINDS = {dict: "object", list: "array", str: "string", int: "integer", float: "number"}
_KINDS |= {bool: "boolean", type(None): "null"}
TYPES = tuple(_KINDS.values())
# The bounds of a shape: what a huge or hostile answer can make it hold.
MAX_DEPTH = 8
MAX_FIELDS = 200
MAX_ITEMS = 50
MAX_WORDS = 8
SAMPLED = 100
SAMPLE_EVERY = 10
SAVE_EVERY = 5.0
# Headers kept: their names; for the first group, a form of the value too.
_HEADERS = re.compile(
    r"(www-authenticate|retry-after|.*rate-?limit.*)|.*(request|correlation)-?id"
)
_CODES = {"invalid_request", "invalid_token", "insufficient_scope"}  # RFC 6750's
_WORD = re.compile(r"[A-Za-z][A-Za-z _-]{0,31}")
_NOT_WORDS = re.compile(
    r"(?i).*(id|token|secret|password|key|name|email|number|code|ur[il])"
)

logger = logging.getLogger("service_api")


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
    kind = _KINDS[type(value)]
    merge(shape, {"n": 1, "types": {kind: 1}})
    if kind == "string":
        form = next(
            (f for f, pattern in FORMATS.items() if pattern.fullmatch(value)), "text"
        )
        masked = re.sub(r"[0-9]+", "9", re.sub(r"[^\W\d_]+", "a", value[:64]))
        merge(shape, {"formats": {form: 1}, "example": masked[:24]})
        known = shape.setdefault("values", {}) if words else {}
        # Past MAX_WORDS words, one is left out: the field is no enum candidate then.
        if words and _WORD.fullmatch(value) and len(known | {value: 0}) <= MAX_WORDS:
            known[value] = known.get(value, 0) + 1
    if depth > MAX_DEPTH:
        return
    if kind == "object":
        fields = shape.setdefault("fields", {})
        for name, item in value.items():
            if name in fields or len(fields) < MAX_FIELDS:
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

        operation = Matcher(spec, base_url)(response)  # the spec's listShipments
    """

    def __init__(self, spec: Spec, base_url: str | httpx.URL) -> None:
        self.base = httpx.URL(str(base_url)).path.rstrip("/")
        # Literal paths first: /things/search is not /things/{thingId}.
        self.operations = sorted(spec.operations, key=lambda op: "{" in op.path)

    def __call__(self, response: httpx.Response) -> Operation | None:
        """The operation ``response`` answers, or None for an answer of no operation."""
        request = response.request
        for op in self.operations:
            pattern = re.sub(r"\\\{.*?\\\}", "[^/]+", re.escape(self.base + op.path))
            if op.method == request.method and re.fullmatch(pattern, request.url.path):
                return op
        return None


class Observation:
    """Shapes of answers seen (see the module docstring); ``data`` is JSON as is:
    ``answers`` by key, ``facts`` (the pages of each list the sample asked for),
    ``requests`` sent and, when the sample's budget ran out, ``stopped``.

    Example::

        observation = Observation.load("observed.json")
        observation.data["answers"]["GET /shipments 200"]["body"]["fields"]
    """

    def __init__(self, data: Shape | None = None) -> None:
        self.data: Shape = {"answers": {}, "facts": {}, "requests": 0, **(data or {})}

    def record(
        self, response: httpx.Response, op: Operation, words: bool = False
    ) -> None:
        """Add the shape of ``response``, whose body was read, an answer of ``op``.

        Example::

            observation.record(response, spec.operation("listShipments"))
        """
        body = response.content  # first: an unread body raises before anything is kept
        media = (
            response.headers.get("content-type", "").partition(";")[0].strip().lower()
        )
        media = media if body else ""
        key = f"{op.method} {op.path} {response.status_code}"
        answer = merge(
            self.data["answers"].setdefault(key, {"headers": {}}),
            {"n": 1, "media": {media: 1}},
        )
        declared = {name for a in op.answers.values() for name in a.headers}
        for name, value in response.headers.items():
            kept = _HEADERS.fullmatch(name)
            if kept or name in declared:
                forms = answer["headers"].setdefault(name, [])
                quoted = re.sub(
                    r'"([^"]*)"', lambda m: m[0] if m[1] in _CODES else '"..."', value
                )
                form = re.sub(r"[0-9]+", "9", quoted)[:80]
                if kept and kept[1] and form not in forms and len(forms) < 5:
                    forms.append(form)
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


def packaged_spec() -> Path:
    """The spec the installed client was generated from: the copy a wheel carries with
    the mock, else the checkout's ``openapi.yaml``.

    Example::

        load_spec(packaged_spec())
    """
    here = Path(__file__).resolve().parents[1]
    copies = (here / "service_api_mock" / "openapi.yaml", here.parent / "openapi.yaml")
    return next((p for p in copies if p.is_file()), copies[-1])


class Observer(Observation):
    """Records the shapes of the answers it is called with into ``path`` (JSON).

    An existing file is read first and added to; one that is not an observation file is
    a :class:`SpecCheckError` (a ``ValueError``), so that nothing is lost.

    Example::

        with service_api.Client(observe="observed.json") as client:
            list(client.shipments.list(max_items=100))
        # then: service-api spec check --from observed.json
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        base_url: str | httpx.URL,
        spec: Spec | None = None,
    ) -> None:
        self.path = Path(path).absolute()  # saved there at exit too, whatever the cwd
        super().__init__(
            Observation.load(self.path).data if self.path.is_file() else None
        )
        self.match = Matcher(spec or load_spec(packaged_spec()), base_url)
        self.counts: Counter[tuple[str, int]] = Counter()
        self.lock = threading.RLock()
        self.saved = -math.inf  # the first answer is saved at once
        atexit.register(self.save)

    def __call__(self, response: httpx.Response) -> None:
        """Record ``response`` (an answer whose body was not read is left alone)."""
        op = self.match(response)
        if op is None:
            return
        with self.lock:
            key = (op.operation_id, response.status_code)
            self.counts[key] += 1
            if self.counts[key] > SAMPLED and self.counts[key] % SAMPLE_EVERY:
                return
            with contextlib.suppress(httpx.ResponseNotRead):
                self.record(response, op)
            if time.monotonic() - self.saved > SAVE_EVERY:
                self.save()

    def save(self) -> None:
        """Write what was recorded (also called at exit)."""
        with self.lock:
            try:
                self.dump(self.path)
            except OSError as exc:
                logger.warning(
                    "cannot save the observed shapes to %s: %s", self.path, exc
                )
            self.saved = time.monotonic()
