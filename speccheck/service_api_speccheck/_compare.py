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
observed* otherwise; the patch marks ``x-observed: DATE`` beside each one seen (one
refuted holds once the patch fixed it). The pages a list answered are reported as facts.
"""

from __future__ import annotations

import datetime
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

from ._observation import FORMATS, MAX_DEPTH, TYPES, Observation, Shape, merge
from ._patch import Edit
from ._report import Finding, Report

#: A value of each JSON type, and a string of each format guessed: what a place of the
#: spec is judged by.
_VALUES: dict[str, Any] = dict(
    zip(TYPES, ({}, [], "x", 1, 1.5, True, None), strict=True)
)
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
    """A place of the spec for people: ``Shipment.status``, ``responses/NotFound``."""
    text = pointer.removeprefix("#/components/schemas/").removeprefix("#/components/")
    text = text.replace("/properties/", ".").replace("/items", "[]")
    return text.replace("~1", "/").replace("~0", "~")


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _under(pointer: str, places: Iterable[str]) -> bool:
    """Whether one of ``places`` is the node at ``pointer`` or under it."""
    return any(f"{place}/".startswith(f"{pointer}/") for place in places)


def _assumed(node: Any, pointer: str = "#") -> Iterator[tuple[str, Any]]:
    """Each node of ``node`` that carries ``x-assumed``, and its pointer."""
    if isinstance(node, list):
        node = dict(enumerate(node))
    if isinstance(node, dict):
        if "x-assumed" in node:
            yield pointer, node
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
    types = [t for t in TYPES if t in (only or shape["types"])]
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
    places of the spec seen (``touched``) and seen not to fit (``misfits``)."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.doc = spec.document
        self.date = datetime.date.today().isoformat()
        resource = Resource.from_contents(self.doc.document, DRAFT202012)
        self.registry = Registry().with_resource(_URI, resource)
        self.findings: dict[tuple[str, str], Finding] = {}
        self.edits: dict[tuple[str, str], Edit] = {}
        self.facts: list[str] = []
        # What was seen, merged: by schema pointer; the objects (their count and field
        # names) by the schema that declares their fields, and their undeclared fields;
        # the forms of each header.
        self.shapes: dict[str, Shape] = defaultdict(dict)
        self.objects: dict[str, Shape] = defaultdict(dict)
        self.undeclared: dict[tuple[str, str], Shape] = defaultdict(dict)
        self.headers: dict[str, dict[str, None]] = defaultdict(dict)
        self.touched: set[str] = set()
        self.misfits: set[str] = set()

    def fits(self, pointer: str, value: Any, formats: bool = False) -> bool:
        checker = _CHECKER if formats else None
        typed = _Typed(
            {"$ref": _URI + pointer}, registry=self.registry, format_checker=checker
        )
        return bool(typed.is_valid(value))

    def found(
        self, kind: str, where: str, detail: str, edit: Edit | None = None
    ) -> None:
        """A finding; with the ``edit`` that fixes it, a difference, else a note."""
        self.findings.setdefault(
            (kind, where), Finding(kind, where, detail, bool(edit))
        )
        if edit:
            self.edits.setdefault((edit[1], str(edit[2])), edit)

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

    def body(self, media: str, answer: Shape) -> Shape:
        """The schema learned of the bodies of ``answer`` sent as ``media``."""
        if is_json(media) and "body" in answer:
            return learned(answer["body"])
        return {"type": "string"}

    def answer(self, op: Operation, status: int, answer: Shape) -> None:
        """Check ``answer`` against the response ``op`` declares for ``status`` (else
        ``NXX``, else ``default``): its content types, bodies and headers. A response it
        does not declare is added, learned from what was seen."""
        label = f"{op.operation_id} {status}"
        self.touched.add(op.pointer)
        keys = [
            k for k in (str(status), f"{status // 100}XX", "default") if k in op.answers
        ]
        if not keys:
            new: Shape = {"description": f"Answered in a sample of {self.date}."}
            if media := [m for m in answer["media"] if m]:
                new["content"] = {m: {"schema": self.body(m, answer)} for m in media}
            if answer["headers"]:
                new["headers"] = {
                    h: {"schema": {"type": "string"}} for h in answer["headers"]
                }
            new["x-observed"] = self.date
            edit = ("add", f"{op.pointer}/responses", str(status), new)
            self.found("status", label, "not declared", edit)
            self.misfits.add(op.pointer)
            return
        node, where = self.doc.at(f"{op.pointer}/responses/{keys[0]}")
        self.touched.add(where)
        if where.startswith("#/components/"):
            label = _label(where)
        content = {str(m).lower(): _escape(m) for m in node.get("content") or {}}
        for media in answer["media"]:
            schema = f"{where}/content/{content.get(media)}/schema"
            if media and media not in content:
                new = {"schema": self.body(media, answer), "x-observed": self.date}
                edit = ("add", f"{where}/content", media, new)
                self.found("content type", label, f"{media}, not declared", edit)
                self.misfits.add(where)
            elif (
                "body" in answer and is_json(media) and self.doc.get(schema) is not None
            ):
                self.walk(answer["body"], schema)
        declared = {str(k).lower(): _escape(k) for k in node.get("headers") or {}}
        for name, forms in answer["headers"].items():
            self.headers[name].update(dict.fromkeys(forms))
            if name in declared:
                pointer = f"{where}/headers/{declared[name]}"
                self.touched.update((pointer, self.doc.at(pointer)[1]))
            else:
                new = {"schema": {"type": "string"}, "x-observed": self.date}
                edit = ("add", f"{where}/headers", name, new)
                self.found("header", label, f"{name}, not declared", edit)

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
        bad = [t for t in TYPES if t in types and not self.fits(raw, _VALUES[t])]
        formats = {} if "string" in bad else shape.get("formats", {})
        wrong = [f for f in formats if not self.fits(raw, _STRINGS[f], formats=True)]
        edit = ("widen", raw, [learned(shape, t) for t in bad], bool(wrong))
        for kind in bad:
            like = f' like "{shape["example"]}"' if kind == "string" else ""
            detail = f"{kind} in {types[kind]} of {shape['n']}{like}, not allowed"
            self.found("null" if kind == "null" else "type", _label(raw), detail, edit)
        for form in wrong:
            detail = (
                f"{form} in {formats[form]} of {shape['n']}, not of the format declared"
            )
            self.found("format", _label(raw), detail, edit)
        if bad or wrong:
            self.misfits.update((raw, self.doc.at(raw)[1]))
        self.words(_label(raw), shape, "enum" in self.doc.get(raw))

    def words(self, where: str, shape: Shape, closed: bool = False) -> None:
        """Report the few words a string field took (``--enums``) as enum candidates."""
        words = shape.get("values", {})
        every = sum(words.values()) == shape["types"].get("string")
        if len(words) > 1 and every and not closed:
            self.found("enum candidate", where, ", ".join(words))

    def run(self, observation: Observation) -> None:
        """Compare everything ``observation`` holds."""
        operations = {f"{op.method} {op.path}": op for op in self.spec.operations}
        for key, answer in sorted(observation.data["answers"].items()):
            route, _, status = key.rpartition(" ")
            if op := operations.get(route):
                self.answer(op, int(status), answer)
        for operation_id, pages in observation.data["facts"].items():
            self.facts.append(
                f"{operation_id} pages (number/size asked): {'; '.join(pages)}"
            )
        for raw, shape in self.shapes.items():
            self.judge(raw, shape)
        for (home, name), shape in self.undeclared.items():
            kinds = "/".join(t for t in TYPES if t in shape["types"])
            formats = list(shape.get("formats", {}))
            if len(formats) == 1 and formats != ["text"]:
                kinds += f" ({formats[0]})"
            where = f"{_label(home)}.{name}"
            new = learned(shape) | {"x-observed": self.date}
            edit = ("add", f"{home}/properties", name, new)
            detail = f"{kinds} in {shape['n']} of {self.objects[home]['n']}"
            self.found("undeclared field", where, detail, edit)
            self.words(where, shape)
        for home, seen in self.objects.items():
            for name in self.doc.get(home).get("properties") or {}:
                if name not in seen["fields"]:
                    where = f"{_label(home)}.{name}"
                    self.found("never seen", where, f"in none of {seen['n']} objects")
        for name, forms in self.headers.items():
            self.facts.append(f"{name}: {' | '.join(forms) or 'seen'}")
        if not any("rate" in name or name == "retry-after" for name in self.headers):
            self.facts.append("rate-limit headers: none seen")


def compare(
    spec: Spec, observation: Observation, *, fingerprint: str | None = None
) -> Report:
    """The report of ``observation`` against ``spec`` and its patch: the edits, and the
    ``x-observed: DATE`` marks of each ``x-assumed`` seen.
    ``fingerprint``: of the spec file's bytes, for :meth:`Report.write` to check.

    Example::

        report = compare(load_spec("openapi.yaml"), Observation.load("observed.json"))
        print(report.text())
    """
    check = _Comparison(spec)
    check.run(observation)
    verdicts = {}
    marks = []
    for pointer, node in _assumed(spec.document.document):
        verdicts[pointer] = "not observed"
        if _under(pointer, check.touched):
            verdicts[pointer] = "confirmed"
        if _under(pointer, check.misfits):
            verdicts[pointer] = "refuted"
        # One refuted is marked too: it holds once the patch fixed it.
        if verdicts[pointer] != "not observed" and "x-observed" not in node:
            marks.append(("add", pointer, "x-observed", check.date))
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
