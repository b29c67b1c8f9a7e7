"""What was seen against what the spec says, and the patch that makes it say what was seen.

Each answer of an observation is found among its operation's declared responses (by
status, ``NXX``, then ``default``); its content types and headers against theirs; its
body's shape walked down the declared schema, field by field and item by item (through
``$ref``, ``allOf``, ``anyOf`` and ``oneOf``). What reaches one place of the spec is
summed there, whichever answer it came in. Then jsonschema judges each place: a value
of each JSON type seen there (and a string of each format guessed) must fit its
schema, with what a shape cannot tell left out (bounds, enums, required fields). A type
that does not fit is a difference the patch widens; a field the schema does not
declare, one it adds with its type and format; a field declared and never seen, a note.

An ``x-assumed`` is *confirmed* when something seen bears on its node (the node or one
under it) and all of it fits, *refuted* when something there does not fit, *not
observed* otherwise; the patch marks ``x-observed: DATE`` beside each one seen (one
refuted holds once the patch fixed it). The pages a list answered, and the forms of the
headers kept, are reported as facts.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from jsonschema import (  # type: ignore[import-untyped]
    Draft202012Validator,
    FormatChecker,
    validators,
)

from service_api_spec import Operation, Spec, escape, is_json, unescape

from ._observation import MAX_DEPTH, TYPES, Shape, merge
from ._report import Edit, Finding, Report

STANDARD = ("date-time", "date", "uuid", "uri", "email")  # the formats the patch writes
#: What a place of the spec is judged by: a value of each JSON type seen there, and for
#: the strings, the name of each format guessed of them (``date``, ``text``...). A
#: string holds a standard format if it is its name, or empty (a string of any format);
#: a value of another type holds every format.
_VALUES = {"object": {}, "array": [], "string": "", "integer": 1, "number": 1.5}
_VALUES |= {"boolean": True, "null": None}
_CHECKER = FormatChecker(formats=())
for _name in STANDARD:
    _CHECKER.checks(_name)(
        lambda v, name=_name: not isinstance(v, str) or v in ("", name)
    )
# A validator of types and formats only: what a shape cannot tell (values' bounds and
# choices, required fields) is not checked, and a oneOf is an anyOf (a shape is of many
# values, which may fit several options).
_KEYWORDS = Draft202012Validator.VALIDATORS
_Typed = validators.create(
    meta_schema=Draft202012Validator.META_SCHEMA,
    validators={k: _KEYWORDS[k] for k in ("$ref", "allOf", "anyOf", "type", "format")}
    | {"oneOf": _KEYWORDS["anyOf"]},
)
_CHOICES = ("allOf", "anyOf", "oneOf")
# What does not fit refutes an x-assumed there; a field or a header more does not.
_MISFITS = ("type", "null", "format", "status", "content type")


def _label(pointer: str) -> str:
    """A place of the spec for people: ``Shipment.status``, ``responses/NotFound``."""
    text = pointer.removeprefix("#/components/schemas/").removeprefix("#/components/")
    text = text.replace("/properties/", ".").replace("/items", "[]")
    return unescape(text)


def _assumed(node: Any, pointer: str = "#") -> Iterator[tuple[str, Any]]:
    """Each node of ``node`` that carries ``x-assumed``, and its pointer."""
    if isinstance(node, list):
        node = dict(enumerate(node))
    if isinstance(node, dict):
        if "x-assumed" in node:
            yield pointer, node
        for key, value in node.items():
            yield from _assumed(value, f"{pointer}/{escape(str(key))}")


def learned(shape: Shape, only: tuple[str, ...] = ()) -> Shape:
    """The schema of what ``shape`` saw (``only``: of its values of those types): its
    types (an ``anyOf`` where an object or array is one of several), the format every
    string had, its fields and items.

    Example::

        learned({"types": {"string": 1, "null": 1}, "formats": {"date": 1}})
        # {"type": ["string", "null"], "format": "date"}
    """
    types = [t for t in TYPES if t in (only or shape["types"])]
    if {"integer", "number"} <= set(types):
        types.remove("integer")  # an integer is a number
    if {"object", "array"} & set(types) and len(set(types) - {"null"}) > 1:
        return {"anyOf": [learned(shape, (t,)) for t in types]}
    schema: Shape = {"type": types if len(types) > 1 else types[0]}
    if "object" in types:
        fields = shape.get("fields", {})
        schema["properties"] = {name: learned(field) for name, field in fields.items()}
    if "array" in types and "items" in shape:
        schema["items"] = learned(shape["items"])
    formats = list(shape.get("formats", {}))
    if "string" in types and len(formats) == 1 and formats[0] in STANDARD:
        schema["format"] = formats[0]
    return schema


class _Comparison:
    """One comparison of an observation with a spec: the findings and their edits, and
    the places of the spec seen (``touched``) and seen not to fit (``misfits``)."""

    def __init__(self, spec: Spec) -> None:
        self.doc = spec.document
        self.date = datetime.date.today().isoformat()
        self.findings: dict[tuple[str, str], Finding] = {}
        self.edits: dict[str, Edit] = {}
        # What was seen, summed: by schema pointer; the objects by the ``properties``
        # that declare their fields; the pointers of the fields those do not declare.
        self.seen: dict[str, Shape] = defaultdict(dict)
        self.objects: dict[str, Shape] = defaultdict(dict)
        self.undeclared: set[str] = set()
        self.touched: set[str] = set()
        self.misfits: set[str] = set()

    def touch(self, pointer: str) -> str:
        """Note the node at ``pointer`` and where its ``$ref`` leads as seen; the latter."""
        where = self.doc.at(pointer)[1]
        self.touched |= {pointer, where}
        return where

    def found(
        self, kind: str, where: str, detail: str, edit: Edit | None = None
    ) -> None:
        """A finding; with the ``edit`` that fixes it, a difference, else a note."""
        self.findings.setdefault(
            (kind, where), Finding(kind, where, detail, bool(edit))
        )
        if edit:
            self.edits.setdefault(edit[0], edit)
        if edit and kind in _MISFITS:
            self.misfits.add(edit[0])

    def fits(self, pointer: str, value: Any) -> bool:
        # The document is the root schema: the pointer's $ref resolves in it, and what
        # else it holds is no keyword of the validator.
        schema = {**self.doc.document, "$ref": pointer}
        return bool(_Typed(schema, format_checker=_CHECKER).is_valid(value))

    def find(self, raw: str, step: str, depth: int = 0) -> str | None:
        """Where ``step`` (``properties``, ``properties/NAME``, ``items``) of the schema
        at ``raw`` is: in it, else in one of its ``allOf``, ``anyOf``, ``oneOf``."""
        node, where = self.doc.at(raw)
        if self.doc.get(f"{where}/{step}") is not None:
            return f"{where}/{step}"
        for key in _CHOICES if isinstance(node, dict) and depth < MAX_DEPTH else ():
            for index, _ in enumerate(node.get(key) or ()):
                if found := self.find(f"{where}/{key}/{index}", step, depth + 1):
                    return found
        return None

    def home(self, raw: str) -> str | None:
        """The ``properties`` that declare the fields of the schema at ``raw``, or would:
        its own, one of its options', or those a plain object schema lacks."""
        node, where = self.doc.at(raw)
        plain = isinstance(node, dict) and not set(_CHOICES) & set(node)
        if plain and "object" in node.get("type", "object"):
            return f"{where}/properties"
        return self.find(raw, "properties")

    def media(self, media: str, answer: Shape) -> Shape:
        """The declaration of the bodies of ``answer`` sent as ``media``."""
        schema = {"type": "string"}
        if is_json(media) and "body" in answer:
            schema = learned(answer["body"])
        return {"schema": schema, "x-observed": self.date}

    def answer(self, op: Operation, status: int, answer: Shape) -> None:
        """Check ``answer`` against the response ``op`` declares for ``status`` (else
        ``NXX``, else ``default``): its content types, body and headers. A response it
        does not declare is added, learned from what was seen."""
        label = f"{op.operation_id} {status}"
        self.touch(op.pointer)
        declared = op.answer(status)
        if declared is None:
            new = {
                "description": f"Answered in a sample of {self.date}.",
                "content": {m: self.media(m, answer) for m in answer["media"]},
                "headers": {
                    h: {"schema": {"type": "string"}} for h in answer["headers"]
                },
                "x-observed": self.date,
            }
            new = {k: v for k, v in new.items() if v}
            edit = (f"{op.pointer}/responses/{status}", "add", new)
            self.found("status", label, "not declared", edit)
            return
        where = self.touch(f"{op.pointer}/responses/{escape(declared.status)}")
        node = self.doc.get(where)
        if where.startswith("#/components/"):
            label = _label(where)
        content = [str(m).lower() for m in node.get("content") or {}]
        for media in answer["media"]:
            if media not in content:
                new = self.media(media, answer)
                edit = (f"{where}/content/{escape(media)}", "add", new)
                self.found("content type", label, f"{media}, not declared", edit)
        if "body" in answer and declared.pointer and is_json(str(declared.media)):
            self.walk(answer["body"], declared.pointer)
        headers = {str(h).lower(): escape(str(h)) for h in node.get("headers") or {}}
        for name in answer["headers"]:
            if name in headers:
                self.touch(f"{where}/headers/{headers[name]}")
            else:
                new = {"schema": {"type": "string"}, "x-observed": self.date}
                edit = (f"{where}/headers/{escape(name)}", "add", new)
                self.found("header", label, f"{name}, not declared", edit)

    def walk(self, shape: Shape, raw: str) -> None:
        """Sum what ``shape`` saw at the schema at ``raw``, then at its fields and items."""
        self.touch(raw)
        merge(self.seen[raw], shape)
        fields = shape.get("fields", {})
        declared = self.home(raw) if fields else None
        if declared:
            merge(self.objects[declared], shape)
        for name, field in fields.items():
            if pointer := self.find(raw, f"properties/{escape(name)}"):
                self.walk(field, pointer)
            elif declared:
                self.undeclared.add(f"{declared}/{escape(name)}")
        if "items" in shape and (items := self.find(raw, "items")):
            self.walk(shape["items"], items)

    def judge(self, raw: str, shape: Shape) -> None:
        """Whether each type (and string format) seen at ``raw`` fits its schema."""
        types = shape["types"]
        count = sum(types.values())
        bad = [t for t in TYPES if t in types and not self.fits(raw, _VALUES[t])]
        formats = {} if "string" in bad else shape.get("formats", {})
        wrong = [f for f in formats if not self.fits(raw, f)]
        options = [learned(shape, (t,)) for t in bad]
        if wrong:
            options.append({"type": "string"})  # a string of no format: drop it
        edit = (raw, "widen", options)
        for kind in bad:
            like = f' like "{shape["example"]}"' if kind == "string" else ""
            detail = f"{kind} in {types[kind]} of {count}{like}, not allowed"
            self.found("null" if kind == "null" else "type", _label(raw), detail, edit)
        for form in wrong:
            detail = f"{form} in {formats[form]} of {count}, not of the format declared"
            self.found("format", _label(raw), detail, edit)
        self.words(raw, shape)

    def words(self, pointer: str, shape: Shape) -> None:
        """Report the few words a string field took (``--enums``) as enum candidates."""
        words = shape.get("values", {})
        every = sum(words.values()) == shape["types"].get("string")
        if len(words) > 1 and every:
            self.found("enum candidate", _label(pointer), ", ".join(words))

    def undeclare(self, pointer: str, shape: Shape, objects: int) -> None:
        """Report the field at ``pointer`` the spec does not declare, and add it."""
        kinds = "/".join(t for t in TYPES if t in shape["types"])
        formats = list(shape.get("formats", {}))
        if len(formats) == 1 and formats != ["text"]:
            kinds += f" ({formats[0]})"
        detail = f"{kinds} in {sum(shape['types'].values())} of {objects}"
        new = learned(shape) | {"x-observed": self.date}
        self.found("undeclared field", _label(pointer), detail, (pointer, "add", new))
        self.words(pointer, shape)

    def run(self, spec: Spec, observation: Shape) -> None:
        """Compare everything ``observation`` holds."""
        operations = {f"{op.method} {op.path}": op for op in spec.operations}
        for key, answer in sorted(observation["answers"].items()):
            route, _, status = key.rpartition(" ")
            if op := operations.get(route):
                self.answer(op, int(status), answer)
        for raw, shape in self.seen.items():
            self.judge(raw, shape)
        for declared, seen in self.objects.items():
            objects = seen["types"]["object"]
            for name in self.doc.get(declared) or {}:
                if name not in seen["fields"]:
                    where = _label(f"{declared}/{escape(str(name))}")
                    self.found("never seen", where, f"in none of {objects} objects")
            for name, field in seen["fields"].items():
                if f"{declared}/{escape(name)}" in self.undeclared:
                    self.undeclare(f"{declared}/{escape(name)}", field, objects)


def compare(spec: Spec, observation: Shape, *, original: bytes | None = None) -> Report:
    """The report of ``observation`` (see :mod:`._observation`) against ``spec`` and its
    patch: the edits, and the ``x-observed: DATE`` marks of each ``x-assumed`` seen.
    ``original``: the spec file's bytes, which :meth:`Report.write` finds unchanged.

    Example::

        report = compare(load_spec("openapi.yaml"), load("observed.json"))
        print(report.text())
    """
    check = _Comparison(spec)
    check.run(spec, observation)
    verdicts = {}
    marks = []
    for pointer, node in _assumed(spec.document.document):
        seen = [p for p in check.touched if f"{p}/".startswith(f"{pointer}/")]
        misfits = [p for p in check.misfits if f"{p}/".startswith(f"{pointer}/")]
        verdicts[pointer] = "refuted" if misfits else "confirmed"
        if not seen + misfits:
            verdicts[pointer] = "not observed"
        elif "x-observed" not in node:  # one refuted too: it holds once patched
            marks.append((f"{pointer}/x-observed", "add", check.date))
    facts = [
        f"{operation_id} pages (number/size asked): {'; '.join(pages)}"
        for operation_id, pages in observation["facts"].items()
    ]
    forms: dict[str, dict[str, None]] = defaultdict(dict)
    for answer in observation["answers"].values():
        for name, seen in answer["headers"].items():
            forms[name].update(dict.fromkeys(seen))
    facts += [f"{name}: {' | '.join(seen)}" for name, seen in forms.items() if seen]
    return Report(
        spec.document.path,
        original,
        observation,
        list(check.findings.values()),
        facts=facts,
        assumptions=verdicts,
        edits=list(check.edits.values()),
        marks=marks,
    )
