"""What was seen against what the spec says, and the patch that makes it say what was seen.

Each answer is found among its operation's declared responses (by status, ``NXX``, then
``default``); its content types and headers against theirs; its body's shape walked down
the declared schema, field by field and item by item (through ``$ref``, ``allOf``,
``anyOf`` and ``oneOf``). jsonschema judges each place: a value of each JSON type seen
there (and a string of each format guessed) must fit the schema, with what a shape
cannot tell left out (bounds, enums, required fields). A type that does not fit is a
difference the patch widens; a field the schema does not declare, one it adds with its
type and format; a field declared and never seen, a note.

An ``x-assumed`` is *confirmed* when something seen bears on its node (the node or one
under it) and all of it fits, *refuted* when something there does not fit, *not
observed* otherwise; the patch marks ``x-observed: DATE`` beside each one seen, but
where the pages refute it (which no patch fixes). A list's pages bear on the
``pageNumber`` parameter (a page past the end is an empty 200) and on the envelope's
``data`` (never more records than the page size, nor than its ``maxItems``, and empty
only past the end).
"""

from __future__ import annotations

import datetime
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from jsonschema import (  # type: ignore[import-untyped]
    Draft202012Validator,
    FormatChecker,
    validators,
)
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from service_api_spec import Operation, Spec, is_json

from ._patch import Edit, node_at
from ._report import Finding, Report
from ._shapes import FORMATS, MAX_DEPTH, Observation, Shape, merge

#: A value of each JSON type, in the order the patch writes types; and a string of each
#: format guessed: what a place of the spec is judged by.
_VALUES: dict[str, Any] = {"object": {}, "array": [], "string": "x", "integer": 1}
_VALUES |= {"number": 1.5, "boolean": True, "null": None}
_STRINGS = {"date-time": "2026-01-05T08:00:00Z", "date": "2026-01-05", "integer": "42"}
_STRINGS |= {"uuid": "4d0a8c3e-6f1b-4a2d-9c7e-1b2a3c4d5e6f", "uri": "https://x.io/y"}
_STRINGS |= {"email": "someone@example.com", "text": "x"}
STANDARD = ("date-time", "date", "uuid", "uri", "email")  # the formats the patch writes
_CHECKER = FormatChecker(formats=())
for _name in STANDARD:
    _CHECKER.checks(_name)(FORMATS[_name].fullmatch)
# A validator of types and formats only: what a shape cannot tell (values' bounds and
# choices, required fields) is not checked, and a oneOf is an anyOf (a shape is of many
# values, which may fit several options).
_KEYWORDS = Draft202012Validator.VALIDATORS
_Typed = validators.create(
    meta_schema=Draft202012Validator.META_SCHEMA,
    validators={k: _KEYWORDS[k] for k in ("$ref", "allOf", "anyOf", "type", "format")}
    | {"oneOf": _KEYWORDS["anyOf"]},
)
_URI = "urn:service-api-speccheck:spec"
_CHOICES = ("allOf", "anyOf", "oneOf")


def _label(pointer: str) -> str:
    text = pointer.removeprefix("#/components/schemas/").removeprefix("#/components/")
    text = text.replace("/properties/", ".").replace("/items", "[]")
    return text.replace("~1", "/").replace("~0", "~")


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _under(pointer: str, places: Iterable[str]) -> bool:
    """Whether one of ``places`` is the node at ``pointer`` or under it."""
    return any(f"{place}/".startswith(f"{pointer}/") for place in places)


def _assumed(node: Any, pointer: str = "#") -> Iterator[str]:
    """The pointer of every node of ``node`` that carries ``x-assumed``."""
    if isinstance(node, list):
        node = dict(enumerate(node))
    if isinstance(node, dict):
        if "x-assumed" in node:
            yield pointer
        for key, value in node.items():
            yield from _assumed(value, f"{pointer}/{_escape(key)}")


def learned(shape: Shape, only: str | None = None) -> Shape:
    """The schema of what ``shape`` saw (``only``: of its values of that type): its
    types (an ``anyOf`` where an object or array is one of several), the format every
    string had, its fields and items.

    Example::

        learned({"n": 2, "types": {"string": 1, "null": 1}, "formats": {"date": 1}})
        # {"type": ["string", "null"], "format": "date"}
    """
    types = [t for t in _VALUES if t in (only or shape["types"])]
    if {"integer", "number"} <= set(types):
        types.remove("integer")  # an integer is a number
    kind = next((t for t in types if t != "null"), "null")
    if {"object", "array"} & set(types) and len(set(types) - {"null"}) > 1:
        return {"anyOf": [learned(shape, t) for t in types]}
    schema: Shape = {"type": types if len(types) > 1 else kind}
    if kind == "object":
        fields = shape.get("fields", {})
        schema["properties"] = {name: learned(field) for name, field in fields.items()}
    if kind == "array" and "items" in shape:
        schema["items"] = learned(shape["items"])
    formats = list(shape.get("formats", {}))
    if kind == "string" and len(formats) == 1 and formats[0] in STANDARD:
        schema["format"] = formats[0]
    return schema


class _Comparison:
    """One comparison of an observation with a spec: findings, facts and edits, and the
    places of the spec seen (``touched``), seen not to fit where the patch fixes that
    (``misfits``) and where it cannot (``broken``: by the pages of a list)."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.doc = spec.document
        self.date = datetime.date.today().isoformat()
        resource = Resource.from_contents(self.doc.document, DRAFT202012)
        self.registry: Any = Registry().with_resource(_URI, resource)
        self.findings: dict[tuple[str, str], Finding] = {}
        self.edits: dict[tuple[str, str], Edit] = {}
        self.facts: list[str] = []
        # What was seen, merged: by schema pointer; the objects (their count and field
        # names) by the schema that declares their fields, and their undeclared fields;
        # the forms of each header by where it was answered.
        self.shapes: dict[str, Shape] = defaultdict(dict)
        self.objects: dict[str, Shape] = defaultdict(dict)
        self.undeclared: dict[tuple[str, str], Shape] = defaultdict(dict)
        self.headers: dict[str, dict[str, list[str]]] = defaultdict(dict)
        self.touched: set[str] = set()
        self.misfits: set[str] = set()
        self.broken: set[str] = set()

    def fits(self, pointer: str, value: Any, formats: bool = False) -> bool:
        checker = _CHECKER if formats else None
        typed = _Typed(
            {"$ref": _URI + pointer}, registry=self.registry, format_checker=checker
        )
        return bool(typed.is_valid(value))

    def found(
        self, kind: str, where: str, detail: str, *misfits: str, note: bool = False
    ) -> None:
        self.findings.setdefault((kind, where), Finding(kind, where, detail, not note))
        self.misfits.update(misfits)

    def edit(self, kind: str, pointer: str, key: Any, value: Any) -> None:
        self.edits.setdefault((pointer, str(key)), (kind, pointer, key, value))

    def find(self, raw: str, step: str, depth: int = 0) -> str | None:
        """Where ``step`` (``properties``, ``properties/name``, ``items``) of the schema
        at ``raw`` is: in it, else in one of its ``allOf`` / ``anyOf`` / ``oneOf``."""
        node, where = self.doc.at(raw)
        if self.doc.get(f"{where}/{step}") is not None:
            return f"{where}/{step}"
        for key in _CHOICES if isinstance(node, dict) and depth < MAX_DEPTH else ():
            for index, _ in enumerate(node.get(key) or ()):
                if found := self.find(f"{where}/{key}/{index}", step, depth + 1):
                    return found
        return None

    def home(self, raw: str) -> str | None:
        """The object schema that declares (or would) the fields of the schema at ``raw``."""
        if found := self.find(raw, "properties"):
            return found.removesuffix("/properties")
        node, where = self.doc.at(raw)
        if not isinstance(node, dict) or set(_CHOICES) & set(node):
            return None
        return where if "object" in node.get("type", "object") else None

    def answer(self, op: Operation, status: int, answer: Shape) -> None:
        """Check ``answer`` against the response ``op`` declares for ``status``; one it
        does not declare is added, learned from what was seen."""
        responses = f"{op.pointer}/responses"
        label = f"{op.operation_id} {status}"
        self.touched.add(op.pointer)
        keys = (str(status), f"{status // 100}XX", "default")
        if key := next((k for k in keys if k in op.answers), None):
            self.response(label, self.doc.at(f"{responses}/{key}")[1], answer)
            return
        self.found("status", label, "not declared", op.pointer)
        new: Shape = {"description": f"Answered in a sample of {self.date}."}
        if media := [m for m in answer["media"] if m]:
            new["content"] = {m: {"schema": self.body(m, answer)} for m in media}
        if answer["headers"]:
            new["headers"] = dict.fromkeys(
                answer["headers"], {"schema": {"type": "string"}}
            )
        self.edit("add", responses, str(status), new | {"x-observed": self.date})

    def body(self, media: str, answer: Shape) -> Shape:
        """The schema learned of the bodies of ``answer`` sent as ``media``."""
        if is_json(media) and "body" in answer:
            return learned(answer["body"])
        return {"type": "string"}

    def response(self, label: str, where: str, answer: Shape) -> None:
        """Check ``answer`` against the response declared at ``where``."""
        node = self.doc.get(where) or {}
        self.touched.add(where)
        if where.startswith("#/components/"):
            label = _label(where)
        content = {str(m).lower(): _escape(m) for m in node.get("content") or {}}
        for media in answer["media"]:
            schema = f"{where}/content/{content.get(media)}/schema"
            if media and media not in content:
                self.found("content type", label, f"{media}, not declared", where)
                new = {"schema": self.body(media, answer), "x-observed": self.date}
                self.edit("add", f"{where}/content", media, new)
            elif (
                "body" in answer and is_json(media) and self.doc.get(schema) is not None
            ):
                self.walk(answer["body"], schema)
        declared = {str(k).lower(): _escape(k) for k in node.get("headers") or {}}
        for name, forms in answer["headers"].items():
            self.headers[name][label.split()[-1]] = forms
            if name in declared:
                pointer = f"{where}/headers/{declared[name]}"
                self.touched.update((pointer, self.doc.at(pointer)[1]))
            else:
                self.found("header", label, f"{name}, not declared")
                new = {"schema": {"type": "string"}, "x-observed": self.date}
                self.edit("add", f"{where}/headers", name, new)

    def walk(self, shape: Shape, raw: str) -> None:
        """Note what ``shape`` saw at the schema at ``raw``, then at its fields and items."""
        self.touched.update((raw, self.doc.at(raw)[1]))
        merge(
            self.shapes[raw],
            {k: v for k, v in shape.items() if k not in ("fields", "items")},
        )
        fields = shape.get("fields", {})
        home = self.home(raw) if fields else None
        if home:
            objects = shape["types"].get("object", 0)
            merge(
                self.objects[home], {"n": objects, "fields": dict.fromkeys(fields, 1)}
            )
        for name, field in fields.items():
            if pointer := self.find(raw, f"properties/{_escape(name)}"):
                self.walk(field, pointer)
            elif home:
                merge(self.undeclared[home, name], field)
        if "items" in shape and (items := self.find(raw, "items")):
            self.walk(shape["items"], items)

    def judge(self, raw: str, shape: Shape) -> None:
        """Whether each type (and string format) seen at ``raw`` fits its schema."""
        types = shape["types"]
        seen = f"of {shape['n']}"
        bad = [t for t in _VALUES if t in types and not self.fits(raw, _VALUES[t])]
        formats = {} if "string" in bad else shape.get("formats", {})
        wrong = [f for f in formats if not self.fits(raw, _STRINGS[f], formats=True)]
        for kind in bad:
            like = f' like "{shape.get("example")}"' if kind == "string" else ""
            detail = f"{kind} in {types[kind]} {seen}{like}, not allowed"
            self.found("null" if kind == "null" else "type", _label(raw), detail, raw)
        for form in wrong:
            detail = f"{form} in {formats[form]} {seen}, not of the format declared"
            self.found("format", _label(raw), detail, raw)
        if bad or wrong:
            self.misfits.add(self.doc.at(raw)[1])
            self.edit("widen", raw, [learned(shape, t) for t in bad], bool(wrong))
        self.words(_label(raw), shape, "enum" in node_at(self.doc.document, raw))

    def words(self, where: str, shape: Shape, closed: bool = False) -> None:
        """Report the few words a string field took (``--enums``) as enum candidates."""
        words = shape.get("values", {})
        every = sum(words.values()) == shape["types"].get("string")
        if len(words) > 1 and every and not closed:
            self.found("enum candidate", where, ", ".join(words), note=True)

    def declare(self, home: str, name: str, shape: Shape) -> None:
        """Report the field ``name`` the schema at ``home`` does not declare; add it."""
        kinds = "/".join(t for t in _VALUES if t in shape["types"])
        formats = list(shape.get("formats", {}))
        if len(formats) == 1 and formats != ["text"]:
            kinds += f" ({formats[0]})"
        where = f"{_label(home)}.{name}"
        detail = f"{kinds} in {shape['n']} of {self.objects[home]['n']}"
        self.found("undeclared field", where, detail)
        self.words(where, shape)
        new = learned(shape) | {"x-observed": self.date}
        self.edit("add", f"{home}/properties", name, new)

    def pages(self, op: Operation, pages: list[Shape]) -> None:
        """Report the pages a list answered; judge ``pageNumber`` and ``data`` by them."""
        served = [p for p in pages if "records" in p]
        said = [
            f"{p['asked'] or 1}/{p['size'] or '-'}: {p['records']} records, "
            f"pageSize {p['pageSize']}, totalRecords {p['totalRecords']}"
            + "".join(f", {link}" for link in ("next", "previous") if p[link])
            for p in served
        ]
        self.facts.append(
            f"{op.operation_id} pages (number/size asked): {'; '.join(said)}"
        )
        if not served:
            return
        total = served[0]["totalRecords"]
        last = math.ceil(total / 50) if isinstance(total, int) else 0
        number = op.parameter("pageNumber")
        success = op.success.pointer if op.success else None
        data = self.find(success, "properties/data") if success else None
        for page in pages:
            records = page.get("records")
            if (page["asked"] or 1) > last and number and number.pointer:
                node = number.pointer.removesuffix("/schema")  # a page past the end
                self.touched.add(node)
                if records != 0:
                    self.broken.add(node)
            elif (
                data
                and records is not None
                and not 0 < records <= (page["pageSize"] or 0)
            ):
                self.broken.add(data)  # empty before the end, or more than a page

    def run(self, observation: Observation) -> None:
        """Compare everything ``observation`` holds."""
        operations = {f"{op.method} {op.path}": op for op in self.spec.operations}
        for key, answer in sorted(observation.data["answers"].items()):
            route, _, status = key.rpartition(" ")
            if op := operations.get(route):
                self.answer(op, int(status), answer)
        for op in self.spec.lists:
            if op.operation_id in observation.data["facts"]:
                self.pages(op, observation.data["facts"][op.operation_id])
        for raw, shape in self.shapes.items():
            self.judge(raw, shape)
        for (home, name), shape in self.undeclared.items():
            self.declare(home, name, shape)
        for home, seen in self.objects.items():
            for name in (self.doc.get(home) or {}).get("properties") or {}:
                if name not in seen["fields"]:
                    where = f"{_label(home)}.{name}"
                    detail = f"in none of {seen['n']} objects"
                    self.found("never seen", where, detail, note=True)
        for name, places in self.headers.items():
            forms = " | ".join(
                dict.fromkeys(f for each in places.values() for f in each)
            )
            self.facts.append(f"{name} on {', '.join(sorted(places))}: {forms or '-'}")
        if not any("rate" in name or name == "retry-after" for name in self.headers):
            self.facts.append("rate-limit headers: none seen")

    def verdicts(self) -> dict[str, str]:
        """Each ``x-assumed``'s pointer: confirmed, refuted or not observed."""
        verdicts = {}
        for pointer in _assumed(self.doc.document):
            verdicts[pointer] = "not observed"
            if _under(pointer, self.touched):
                verdicts[pointer] = "confirmed"
            if _under(pointer, self.misfits | self.broken):
                verdicts[pointer] = "refuted"
        return verdicts


def compare(
    spec: Spec, observation: Observation, *, fingerprint: str | None = None
) -> Report:
    """The report of ``observation`` against ``spec`` and its patch: the edits, and the
    ``x-observed: DATE`` marks of each ``x-assumed`` seen, but where the pages refute it.
    ``fingerprint``: of the spec file's bytes, for :meth:`Report.write` to check.

    Example::

        report = compare(load_spec("openapi.yaml"), Observation.load("observed.json"))
        print(report.text())
    """
    check = _Comparison(spec)
    check.run(observation)
    verdicts = check.verdicts()
    marks = [
        ("add", pointer, "x-observed", check.date)
        for pointer, verdict in verdicts.items()
        if verdict != "not observed"
        and not _under(pointer, check.broken)
        and "x-observed" not in node_at(spec.document.document, pointer)
    ]
    return Report(
        spec.document.path,
        fingerprint,
        observation.data,
        list(check.findings.values()),
        facts=check.facts,
        assumptions=verdicts,
        edits=list(check.edits.values()),
        marks=marks,
    )
