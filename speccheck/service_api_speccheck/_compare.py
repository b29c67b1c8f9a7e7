"""What was seen against what the spec says, and the patch that makes it say what was seen.

Each answer is found among its operation's declared responses (by status, ``NXX``, then
``default``); its content types and headers against theirs; its body's shape walked down
the declared schema, field by field and item by item. jsonschema judges each place: a
value of each JSON type seen there (and a string of each format guessed) must fit the
schema, with what a shape cannot tell left out of the spec (bounds, enums, required
fields). A type that does not fit is a difference the patch widens; a field the schema
does not declare, one it adds with its type and format; a field declared and never
seen, a note. An ``x-assumed`` is *confirmed* when something seen bears on its node (the
node or one under it) and all of it fits, *refuted* when something there does not fit,
*not observed* otherwise. A list's pages bear on the ``pageNumber`` parameter (a page
past the end is an empty 200) and on the envelope's ``data`` (never more records than
the page size, nor than its ``maxItems``, and empty only past the end).
"""

from __future__ import annotations

import copy
import datetime
import math
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from jsonschema import (  # type: ignore[import-untyped]
    Draft202012Validator,
    FormatChecker,
    validators,
)
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from service_api_spec import Operation, Spec, SpecDocument, is_json, read_spec

from ._patch import apply, node_at
from ._report import Finding, Report
from ._shapes import FORMATS, MAX_DEPTH, Observation, Shape, merge

_URI = "urn:service-api-speccheck:spec"
_ORDER = ("object", "array", "string", "integer", "number", "boolean", "null")
# A value of each JSON type, and a string of each format guessed, to judge a place by.
_VALUES: dict[str, Any] = dict(
    zip(_ORDER, ({}, [], "x", 1, 1.5, True, None), strict=True)
)
_STRINGS = {"date-time": "2026-01-05T08:00:00Z", "date": "2026-01-05", "integer": "42"}
_STRINGS |= {"uuid": "4d0a8c3e-6f1b-4a2d-9c7e-1b2a3c4d5e6f", "uri": "https://x.io/y"}
_STRINGS |= {"email": "someone@example.com", "text": "x"}
STANDARD = ("date-time", "date", "uuid", "uri", "email")  # the formats the patch writes
# A validator of types and formats only: what a shape cannot tell (values' bounds and
# choices, required fields) is not checked, and a oneOf is an anyOf (a shape is of many
# values, which may fit several options).
_IGNORED = (
    *("enum", "const", "pattern", "minLength", "maxLength", "minimum", "maximum"),
    *("exclusiveMinimum", "exclusiveMaximum", "multipleOf", "required", "not"),
    *("minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties"),
)
_Typed = validators.extend(
    Draft202012Validator,
    {
        **dict.fromkeys(_IGNORED, lambda *_: None),
        "oneOf": Draft202012Validator.VALIDATORS["anyOf"],
    },
)
_CHOICES = ("allOf", "anyOf", "oneOf")


def _label(pointer: str) -> str:
    text = pointer.removeprefix("#/components/schemas/").removeprefix("#/components/")
    text = text.replace("/properties/", ".").replace("/items", "[]")
    return text.replace("~1", "/").replace("~0", "~")


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def learned(shape: Shape, only: str | None = None) -> Shape:
    """The schema of what ``shape`` saw (``only``: of its values of that type): its
    types (an ``anyOf`` where an object or array is one of several), the format every
    string had, its fields and items.

    Example::

        learned({"n": 2, "types": {"string": 1, "null": 1}, "formats": {"date": 1}})
        # {"type": ["string", "null"], "format": "date"}
    """
    types = [t for t in _ORDER if t in (only or shape.get("types", {}))]
    if {"integer", "number"} <= set(types):
        types.remove("integer")  # an integer is a number
    kind = next((t for t in types if t != "null"), "null")
    if {"object", "array"} & set(types) and len(set(types) - {"null"}) > 1:
        return {"anyOf": [learned(shape, t) for t in types]}
    schema: Shape = {"type": types if len(types) > 1 else kind}
    if kind == "object":
        schema["properties"] = {
            k: learned(v) for k, v in shape.get("fields", {}).items()
        }
    if kind == "array" and "items" in shape:
        schema["items"] = learned(shape["items"])
    formats = list(shape.get("formats", {}))
    if kind == "string" and len(formats) == 1 and formats[0] in STANDARD:
        schema["format"] = formats[0]
    return schema


class _Comparison:
    """One comparison of an observation with a spec: findings, facts and edits, and
    the places in the spec seen (``touched``) and seen not to fit (``misfits``)."""

    def __init__(self, spec: Spec, date: str) -> None:
        self.spec, self.doc, self.date = spec, spec.document, date
        resource = Resource.from_contents(self.doc.document, DRAFT202012)
        self.registry: Any = Registry().with_resource(_URI, resource)
        self.checker = FormatChecker(formats=())
        for name in STANDARD:
            self.checker.checks(name)(lambda v, f=FORMATS[name]: bool(f.fullmatch(v)))
        self.findings: dict[tuple[str, str], Finding] = {}
        self.edits: dict[tuple[str, str], Any] = {}
        self.facts: list[str] = []
        # Shapes merged by where they were seen: a schema's pointer (``seen``), an
        # undeclared field's (object pointer, name), an object schema's, a header's.
        self.seen: dict[Any, Shape] = defaultdict(dict)
        self.touched: set[str] = set()
        self.misfits: set[str] = set()

    def fits(self, pointer: str, value: Any, formats: bool = False) -> bool:
        checker = self.checker if formats else None
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
        kinds = node.get("type", "object") if isinstance(node, dict) else ""
        choice = isinstance(node, dict) and set(_CHOICES) & set(node)
        return where if "object" in kinds and not choice else None

    def answer(self, op: Operation, status: int, answer: Shape) -> None:
        """Check ``answer`` against the response ``op`` declares for ``status``; one it
        does not declare is added: another operation's of that status that has the
        content types seen (its ``$ref``), else one learned."""
        responses = f"{op.pointer}/responses"
        declared = self.doc.get(responses) or {}
        keys = [
            k for k in (str(status), f"{status // 100}XX", "default") if k in declared
        ]
        label = f"{op.operation_id} {status}"
        self.touched.add(op.pointer)
        if keys:
            return self.response(
                label, self.doc.at(f"{responses}/{keys[0]}")[1], answer
            )
        self.found("status", label, "not declared", op.pointer)
        media = {m for m in answer["media"] if m}
        for other in self.spec.operations:
            ref = (self.doc.get(f"{other.pointer}/responses") or {}).get(
                str(status)
            ) or {}
            target = self.doc.get(str(ref.get("$ref"))) or {}
            if "$ref" in ref and media <= set(target.get("content") or {}):
                self.edit("add", responses, str(status), ref)
                return self.response(label, self.doc.at(ref["$ref"])[1], answer)
        new: Shape = {"description": f"Answered in a sample of {self.date}."}
        if media:
            new["content"] = {m: {"schema": self.schema(m, answer)} for m in media}
        if answer["headers"]:
            new["headers"] = {
                h: {"schema": {"type": "string"}} for h in answer["headers"]
            }
        self.edit("add", responses, str(status), new | {"x-observed": self.date})
        return None

    def schema(self, media: str, answer: Shape) -> Shape:
        body = answer.get("body") if is_json(media) else None
        return learned(body) if body else {"type": "string"}

    def response(self, label: str, where: str, answer: Shape) -> None:
        """Check ``answer`` against the response declared at ``where``."""
        node = self.doc.get(where) or {}
        self.touched.add(where)
        label = _label(where) if where.startswith("#/components/") else label
        content = {str(m).lower(): _escape(m) for m in node.get("content") or {}}
        for media in answer["media"]:
            if not media and content:
                self.found(
                    "no body", label, "none sent, one declared", where, note=True
                )
            elif media not in content and media:
                self.found("content type", label, f"{media}, not declared", where)
                new = {"schema": self.schema(media, answer), "x-observed": self.date}
                self.edit("add", f"{where}/content", media, new)
            elif is_json(media) and "body" in answer:
                self.walk(answer["body"], f"{where}/content/{content[media]}/schema")
        declared = {str(k).lower(): _escape(k) for k in node.get("headers") or {}}
        for name, seen in answer["headers"].items():
            merge(self.seen[name], {label.split()[-1]: seen["forms"]})
            if name in declared:
                pointer = f"{where}/headers/{declared[name]}"
                self.touched.update((pointer, self.doc.at(pointer)[1]))
            else:
                self.found("header", label, f"{name}, not declared")
                new = {"schema": {"type": "string"}, "x-observed": self.date}
                self.edit("add", f"{where}/headers", name, new)
        for name, key in declared.items():
            required = (self.doc.get(f"{where}/headers/{key}") or {}).get("required")
            if required and name not in answer["headers"]:
                self.found(
                    "header never sent", label, f"{name}, required", where, note=True
                )

    def walk(self, shape: Shape, raw: str, depth: int = 0) -> None:
        """Note what ``shape`` saw at the schema at ``raw``, then at its fields and items."""
        self.touched.update((raw, self.doc.at(raw)[1]))
        merge(
            self.seen[raw],
            {k: v for k, v in shape.items() if k not in ("fields", "items")},
        )
        fields = shape.get("fields", {}) if depth < MAX_DEPTH else {}
        home = self.home(raw) if fields else None
        if home:
            seen = {
                "n": shape["types"].get("object", 0),
                "fields": dict.fromkeys(fields, 1),
            }
            merge(self.seen[home, None], seen)
        for name, sub in fields.items():
            if pointer := self.find(raw, f"properties/{_escape(name)}"):
                self.walk(sub, pointer, depth + 1)
            elif home:
                merge(self.seen[home, name], sub)
        if "items" in shape and (items := self.find(raw, "items")):
            self.walk(shape["items"], items, depth + 1)

    def judge(self, raw: str, shape: Shape) -> None:
        """Whether each type (and string format) seen at ``raw`` fits its schema."""
        types, n = shape["types"], shape["n"]
        bad = [t for t in _ORDER if t in types and not self.fits(raw, _VALUES[t])]
        formats = {} if "string" in bad else shape.get("formats", {})
        wrong = [f for f in formats if not self.fits(raw, _STRINGS[f], formats=True)]
        node = node_at(self.doc.document, raw)
        said = node.get("type") or str(node.get("$ref", "a choice")).split("/")[-1]
        said = "/".join(said) if isinstance(said, list) else said
        said += f" ({node['format']})" if "format" in node else ""
        for kind in bad:
            like = f' like "{shape.get("example")}"' if kind == "string" else ""
            detail = f"declared {said}, {kind} in {types[kind]} of {n}{like}"
            self.found("null" if kind == "null" else "type", _label(raw), detail, raw)
        for form in wrong:
            detail = f"declared {said}, {form} in {formats[form]} of {n}"
            self.found("format", _label(raw), detail, raw)
        if bad or wrong:
            self.misfits.add(self.doc.at(raw)[1])
            self.edit("widen", raw, [learned(shape, t) for t in bad], bool(wrong))
        self.words(_label(raw), shape, "enum" in node)

    def words(self, where: str, shape: Shape, closed: bool = False) -> None:
        """Report the few words a string field took (``--enums``) as enum candidates."""
        words = shape.get("values", {})
        every = sum(words.values()) == shape["types"].get("string")
        if 1 < len(words) <= 8 and every and not closed:
            self.found("enum candidate", where, ", ".join(words), note=True)

    def pages(self, op: Operation, pages: list[Shape]) -> None:
        """Report the pages a list answered; judge ``pageNumber`` and ``data`` by them."""
        served = [p for p in pages if "records" in p]
        total = served[0]["totalRecords"] if served else None
        last = math.ceil(total / 50) if isinstance(total, int) else 0
        said = [
            f"{p['asked'] or 1}/{p['size'] if p['asked'] else '-'}: {p['records']} records, "
            f"pageSize {p['pageSize']}, totalRecords {p['totalRecords']}"
            + "".join(f", {link}" for link in ("next", "previous") if p[link])
            for p in served
        ]
        self.facts.append(
            f"{op.operation_id} pages (number/size asked): {'; '.join(said)}"
        )
        number = op.parameter("pageNumber")
        past = [p for p in pages if p["asked"] == last + 1]
        if past and number and number.pointer:
            node = number.pointer.removesuffix("/schema")
            self.touched.add(node)
            if past[0].get("records") != 0:
                self.misfits.add(node)
        success = op.success.pointer if op.success else None
        data = self.find(success, "properties/data") if success and served else None
        most = (self.doc.get(data) or {}).get("maxItems", math.inf) if data else 0
        for page in served if data else ():
            self.touched.add(str(data))
            empty = not page["records"] and (page["asked"] or 1) <= last
            if empty or page["records"] > min(page["pageSize"] or 0, most):
                self.misfits.add(str(data))

    def run(self, observation: Observation) -> None:
        operations = {(op.method, op.path): op for op in self.spec.operations}
        for key, answer in sorted(observation.data["answers"].items()):
            method, path, status = key.split(" ")
            if op := operations.get((method, path)):
                self.answer(op, int(status), answer)
        by_id = {op.operation_id: op for op in self.spec.operations}
        for operation_id, pages in observation.data["facts"].items():
            if operation_id in by_id:
                self.pages(by_id[operation_id], pages)
        for key, shape in list(self.seen.items()):
            if isinstance(key, tuple) and key[1] is not None:
                self.undeclared(key[0], key[1], shape)
            elif isinstance(key, tuple):
                declared = (self.doc.get(key[0]) or {}).get("properties") or {}
                for name in set(declared) - set(shape["fields"]):
                    where = f"{_label(key[0])}.{name}"
                    self.found(
                        "never seen",
                        where,
                        f"in none of {shape['n']} objects",
                        note=True,
                    )
            elif key.startswith("#"):
                self.judge(key, shape)
            else:  # a header
                forms = dict.fromkeys(f for each in shape.values() for f in each)
                said = f": {' | '.join(forms)}" if forms else ""
                self.facts.append(f"{key} on {', '.join(sorted(shape))}{said}")
        if not any("rate" in str(k) or k == "retry-after" for k in self.seen):
            self.facts.append("rate-limit headers: none seen")

    def undeclared(self, home: str, name: str, shape: Shape) -> None:
        kinds = "/".join(t for t in _ORDER if t in shape["types"])
        formats = list(shape.get("formats", {}))
        form = f" ({formats[0]})" if len(formats) == 1 and formats != ["text"] else ""
        where = f"{_label(home)}.{name}"
        detail = f"{kinds}{form} in {shape['n']} of {self.seen[home, None]['n']}"
        self.found("undeclared field", where, detail)
        self.words(where, shape)
        self.edit(
            "add",
            f"{home}/properties",
            name,
            learned(shape) | {"x-observed": self.date},
        )

    def assumed(self) -> dict[str, str]:
        """Each ``x-assumed``'s pointer: confirmed, refuted or not observed."""
        verdicts = {}
        for pointer in _assumed(self.doc.document):
            verdicts[pointer] = "not observed"
            for places, verdict in (
                (self.touched, "confirmed"),
                (self.misfits, "refuted"),
            ):
                if any(f"{p}/".startswith(f"{pointer}/") for p in places):
                    verdicts[pointer] = verdict
        return verdicts


def _assumed(node: Any, pointer: str = "#") -> Iterator[str]:
    if isinstance(node, list):
        node = dict(enumerate(node))
    if isinstance(node, dict):
        if "x-assumed" in node:
            yield pointer
        for key, value in node.items():
            yield from _assumed(value, f"{pointer}/{_escape(key)}")


def compare(
    spec: Spec, observation: Observation, *, fingerprint: str | None = None
) -> Report:
    """The report of ``observation`` against ``spec`` and its patch: the edits, and the
    ``x-observed: DATE`` marks of each ``x-assumed`` the patched spec sees confirmed.
    ``fingerprint``: of the spec file's bytes, for :meth:`Report.write` to check.

    Example::

        report = compare(load_spec("openapi.yaml"), Observation.load("observed.json"))
        print(report.text())
    """
    date = datetime.date.today().isoformat()
    first = _Comparison(spec, date)
    first.run(observation)
    patched = copy.deepcopy(spec.document.document)
    for edit in first.edits.values():
        apply(patched, edit)
    again = _Comparison(read_spec(SpecDocument(patched, spec.document.path)), date)
    again.run(observation)
    marks = [
        ("add", pointer, "x-observed", date)
        for pointer, verdict in again.assumed().items()
        if verdict == "confirmed" and "x-observed" not in node_at(patched, pointer)
    ]
    report = Report(
        spec.document.path, fingerprint, observation.data, list(first.findings.values())
    )
    report.facts += first.facts
    report.assumptions.update(first.assumed())
    report.edits += [*first.edits.values()]
    report.marks += marks
    return report
