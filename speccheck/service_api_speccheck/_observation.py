"""What was seen, kept as shapes: field names, JSON types, guessed formats, statuses,
content types and a few headers of every answer, never a value.

A *shape* summarises the JSON values seen at one place: ``types`` and ``formats`` (how
many of each), ``example`` (one string masked: each run of letters is ``a``, of digits
``9``, so ``PO-ACCT-1-00042`` is ``a-a-9-9``), ``fields`` (the shape of each field of the
objects seen), ``items`` (of the arrays' items) and, for ``--enums`` only, ``values``
(the few short words a string field took, never of a field named like an identifier, a
name, a code or a secret).

An *observation* is a JSON object: ``answers`` by key (``"GET /shipments 200"``), each
with ``met`` (how many were met), ``n`` (how many were recorded), ``first`` and ``last``
(when one was first and last recorded, UTC), ``seen`` (for each place of its body,
``data[].status``, and each JSON type found there, when it was first and last seen, so
that a change of shape has a date), ``media`` (its content types), ``headers`` (a
few: the value of ``www-authenticate``, ``retry-after`` and the
rate-limit headers as a form, numbers as ``9``, quoted strings as ``"..."`` but RFC
6750's error codes; of request ids the name only) and ``body`` (the shape of its JSON
bodies); ``facts`` (the pages of each list
the sample asked for), ``requests`` sent and, when the sample's budget ran out,
``stopped``. The live sample and ``Client(observe=Observer(...))`` both build one with an
:class:`Observer`; the comparison reads it, whichever made it.

Passive learning: ``Client(observe=Observer(PATH))`` is called with every answer
whose body it has read. It samples (every answer of an operation and status up to
``SAMPLED``, then one in ``SAMPLE_EVERY``), writes the file with the first answer, then
at most every ``SAVE_EVERY`` seconds, and when the program ends; an existing one is
added to. ``service-api spec check --from PATH`` then reports on it and patches the spec.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import logging
import math
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from service_api_spec import Spec, is_json, load_spec, packaged_spec

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
#: The JSON types, in the order the patch writes them.
TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
_KINDS = dict(zip((dict, list, str, int, float, bool, type(None)), TYPES, strict=True))
# The bounds of a shape: what a huge or hostile answer can make it hold.
MAX_DEPTH = 8
MAX_FIELDS = 200
MAX_ITEMS = 50
MAX_WORDS = 8
SAMPLED = 100
SAMPLE_EVERY = 10
SAVE_EVERY = 5.0
MAX_PLACES = 300  # places dated per answer
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


def merge(into: Shape, shape: Shape) -> Shape:
    """``into`` with ``shape`` added to it: counts summed, nested shapes merged.

    Example::

        merge({"types": {"string": 1}}, {"types": {"string": 2, "null": 1}})
    """
    for key, value in shape.items():
        if isinstance(value, dict):
            merge(into.setdefault(key, {}), value)
        elif isinstance(value, int):
            into[key] = into.get(key, 0) + value
        else:
            into.setdefault(key, value)
    return into


def add(shape: Shape, value: Any, words: bool = False, depth: int = 0) -> Shape:
    """``shape`` with the shape of ``value`` (read by ``json.loads``) added to it;
    ``words``: keep short words (``--enums``).

    Example::

        add({}, {"status": "Planned"})["fields"]["status"]["types"]  # {"string": 1}
    """
    kind = _KINDS[type(value)]
    merge(shape, {"types": {kind: 1}})
    if kind == "string":
        form = next((f for f, rule in FORMATS.items() if rule.fullmatch(value)), "text")
        masked = re.sub(r"[0-9]+", "9", re.sub(r"[^\W\d_]+", "a", value[:64]))
        merge(shape, {"formats": {form: 1}, "example": masked[:24]})
        known = shape.get("values", {})
        # Past MAX_WORDS words, one is left out: the field is no enum candidate then.
        if words and _WORD.fullmatch(value) and len(known | {value: 0}) <= MAX_WORDS:
            merge(shape, {"values": {value: 1}})
    if depth > MAX_DEPTH:
        return shape
    if kind == "object":
        fields = shape.setdefault("fields", {})
        for name, item in value.items():
            if name in fields or len(fields) < MAX_FIELDS:
                keep = words and not _NOT_WORDS.fullmatch(name)
                add(fields.setdefault(name, {}), item, keep, depth + 1)
    for item in value[:MAX_ITEMS] if kind == "array" else ():
        add(shape.setdefault("items", {}), item, words, depth + 1)
    return shape


def places(value: Any, path: str = "", depth: int = 0) -> dict[str, set[str]]:
    """The JSON types at each place of ``value``: ``{"": {"object"}, "data[].status":
    {"string"}}`` (bounded as shapes are).

    Example::

        places({"data": [{"status": 1}]})["data[].status"]  # {"integer"}
    """
    found: dict[str, set[str]] = {path: {_KINDS[type(value)]}}
    if depth > MAX_DEPTH:
        return found
    inside: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for name, item in value.items():
            place = f"{path}.{name}" if path else str(name)
            inside.append((place, item))
    elif isinstance(value, list):
        for item in value[:MAX_ITEMS]:
            inside.append((f"{path}[]", item))
    for place, item in inside:
        for inner, kinds in places(item, place, depth + 1).items():
            if inner in found or len(found) < MAX_PLACES:
                found.setdefault(inner, set()).update(kinds)
    return found


def changes(observation: Shape) -> list[str]:
    """When the places of the answers changed, from the dates an observation keeps: a
    type that gave way to another (``integer until T, then string from T2``), a place
    that appeared after the answer was first seen, or was last seen before its last.

    Example::

        changes(load("observed.json"))
        # ['GET /shipments 200 data[].status: integer until 2026-05-01T10:00:00Z, ...']
    """
    lines = []
    for key, answer in sorted(observation.get("answers", {}).items()):
        first = answer.get("first")
        last = answer.get("last")
        for place, kinds in sorted(answer.get("seen", {}).items()):
            where = f"{key} {place or '(body)'}"
            # Each type with its first and last time, the earliest first.
            spans = sorted(kinds.items(), key=lambda kind: kind[1])
            for before, after in itertools.pairwise(spans):
                old, (_, until) = before
                new, (since, _) = after
                if until < since:
                    change = f"{old} until {until}, then {new} from {since}"
                    lines.append(f"{where}: {change}")
            begun = min(span[0] for _, span in spans)
            ended = max(span[1] for _, span in spans)
            if first and begun > first:
                lines.append(f"{where}: first seen {begun} (answers since {first})")
            if last and ended < last:
                lines.append(f"{where}: last seen {ended} (answers until {last})")
    return lines


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def load(path: str | Path) -> Shape:
    """The observation written at ``path``; :class:`SpecCheckError` if it is none.

    Example::

        load("observed.json")["requests"]
    """
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise SpecCheckError(f"{path}: cannot be read as JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("answers"), dict):
        raise SpecCheckError(f"{path}: not an observation file of service-api")
    return data


def replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (see :mod:`._write`)."""
    from ._write import replace as write  # it imports this module's error

    write(path, text)


def _raw_path(url: httpx.URL) -> str:
    """The path of ``url`` as sent (percent-encoded), without its query."""
    return url.raw_path.decode("ascii").partition("?")[0]


class Observer:
    """Records the shapes of the answers it is called with (the operations of ``spec``
    found by their method and path under ``base_url``, or under any base path when it is
    None) into ``data``, an observation, and saves it in ``path`` (JSON) if given. It is
    a ``service_api.AnswerObserver``: ``Client(observe=Observer(path))``.

    An existing file is read first and added to; one that is not an observation file is
    a :class:`SpecCheckError` (a ``ValueError``), so that nothing is lost.

    Example::

        with service_api.Client(observe=Observer("observed.json")) as client:
            list(client.shipments.list(max_items=100))
        # then: service-api spec check --from observed.json
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        base_url: str | httpx.URL | None = None,
        spec: Spec | None = None,
        words: bool = False,
    ) -> None:
        self.path = Path(path).absolute() if path else None  # the same file at exit
        self.data: Shape = {"answers": {}, "facts": {}, "requests": 0}
        if self.path and self.path.is_file():
            self.data = load(self.path)
        self.words = words
        # The paths of the spec lie under the base URL's path (None: under any).
        self.base = None
        if base_url is not None:
            self.base = _raw_path(httpx.URL(str(base_url))).rstrip("/")
        self.spec = spec or load_spec(packaged_spec())
        self.lock = threading.RLock()
        self.saved = -math.inf  # the first answer is saved at once
        if path:
            atexit.register(self.save)

    def __call__(self, response: httpx.Response) -> None:
        """Record ``response`` (an answer whose body was not read is left alone)."""
        request = response.request
        path = _raw_path(request.url)
        found = None
        if self.base is None:
            # Any base path: the longest end of the path that is a route of the spec.
            for start, char in enumerate(path):
                if char == "/" and found is None:
                    found = self.spec.route(request.method, path[start:])
        elif path.startswith(self.base):
            found = self.spec.route(request.method, path[len(self.base) :])
        if found is None:
            return
        op = found[0]
        key = f"{op.method} {op.path} {response.status_code}"
        with self.lock:
            answer = self.data["answers"].setdefault(key, {"media": {}, "headers": {}})
            answer["met"] = answer.get("met", 0) + 1
            if answer["met"] <= SAMPLED or answer["met"] % SAMPLE_EVERY == 0:
                with contextlib.suppress(httpx.ResponseNotRead):
                    self.record(response, answer)
            if self.path and time.monotonic() - self.saved > SAVE_EVERY:
                self.save()

    def record(self, response: httpx.Response, answer: Shape) -> None:
        """Add the shape of ``response``, whose body was read, to ``answer``."""
        body = response.content  # first: an unread body raises before anything is kept
        content_type = response.headers.get("content-type", "")
        media = content_type.partition(";")[0].strip().lower()
        merge(answer, {"n": 1, "media": {media: 1} if body else {}})
        for name, value in response.headers.items():
            if kept := _HEADERS.fullmatch(name):
                forms = answer["headers"].setdefault(name, [])
                quoted = re.sub(
                    r'"([^"]*)"', lambda m: m[0] if m[1] in _CODES else '"..."', value
                )
                form = re.sub(r"[0-9]+", "9", quoted)[:80]
                if kept[1] and form not in forms and len(forms) < 5:
                    forms.append(form)
        now = _now()
        answer.setdefault("first", now)
        answer["last"] = now
        if body and is_json(media):
            # A body that is not JSON: its content type says what it claimed.
            with contextlib.suppress(ValueError, RecursionError):
                value = json.loads(body)
                add(answer.setdefault("body", {}), value, self.words)
                self.date(answer.setdefault("seen", {}), value, now)

    def date(self, seen: Shape, value: Any, now: str) -> None:
        """Date in ``seen`` each JSON type at each place of ``value``: when it was first
        and last seen."""
        for place, kinds in places(value).items():
            if place not in seen and len(seen) >= MAX_PLACES:
                continue
            dated = seen.setdefault(place, {})
            for kind in kinds:
                span = dated.setdefault(kind, [now, now])
                span[1] = now

    def save(self) -> None:
        """Write what was recorded to ``path`` (also called at exit)."""
        with self.lock:
            try:
                replace(
                    Path(str(self.path)),
                    json.dumps(self.data, indent=1, sort_keys=True),
                )
            except OSError as exc:
                logger.warning(
                    "cannot save the observed shapes to %s: %s", self.path, exc
                )
            self.saved = time.monotonic()
