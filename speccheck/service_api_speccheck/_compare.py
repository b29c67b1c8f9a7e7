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
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker  # type: ignore[import-untyped]
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
# What a shape cannot be checked against: values' bounds and choices, required fields.
_LEFT_OUT = {
    *("enum", "const", "pattern", "minLength", "maxLength", "minimum", "maximum"),
    *("exclusiveMinimum", "exclusiveMaximum", "multipleOf", "required", "minItems"),
    *(
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "not",
        "discriminator",
    ),
}
_CHOICES = ("allOf", "anyOf", "oneOf")


def _typed_only(node: Any, names: bool = False) -> Any:
    """The document without :data:`_LEFT_OUT`, each ``oneOf`` an ``anyOf`` (a shape may
    fit several options); ``names``: ``node`` maps names to schemas (``properties``)."""
    if isinstance(node, list):
        return [_typed_only(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        ("anyOf" if key == "oneOf" and not names else key): _typed_only(
            value, key in ("properties", "schemas", "$defs") and not names
        )
        for key, value in node.items()
        if names or key not in _LEFT_OUT
    }


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
    solid = [t for t in types if t != "null"] or ["null"]
    if len(solid) > 1 and {"object", "array"} & set(solid):
        return {"anyOf": [learned(shape, t) for t in types]}
    schema: Shape = {"type": types if len(types) > 1 else solid[0]}
    if solid[0] == "object":
        schema["properties"] = {
            k: learned(v) for k, v in shape.get("fields", {}).items()
        }
    if solid[0] == "array" and "items" in shape:
        schema["items"] = learned(shape["items"])
    formats = list(shape.get("formats", {}))
    if solid[0] == "string" and len(formats) == 1 and formats[0] in STANDARD:
        schema["format"] = formats[0]
    return schema


class _Comparison:
    """One comparison of an observation with a spec: findings, facts and edits, and
    the places in the spec seen (``touched``) and seen not to fit (``misfits``)."""

    def __init__(self, spec: Spec, date: str) -> None:
        self.spec, self.doc, self.date = spec, spec.document, date
        typed = Resource.from_contents(_typed_only(self.doc.document), DRAFT202012)
        self.registry: Any = Registry().with_resource(_URI, typed)
        self.checker = FormatChecker(formats=())
        for name in STANDARD:
            self.checker.checks(name)(lambda v, f=FORMATS[name]: bool(f.fullmatch(v)))
        self.findings: dict[tuple[str, str], Finding] = {}
        self.edits: dict[tuple[str, str], Any] = {}
        self.facts: list[str] = []
        self.seen: dict[str, Shape] = {}  # a schema's pointer: what was seen there
        self.undeclared: dict[tuple[str, str], Shape] = {}  # (object's pointer, field)
        self.objects: dict[
            str, Shape
        ] = {}  # an object schema's pointer: objects, fields
        self.headers: dict[str, Shape] = {}
        self.touched: set[str] = set()
        self.misfits: set[str] = set()

    def fits(self, pointer: str, value: Any, formats: bool = False) -> bool:
        checker = self.checker if formats else None
        schema = {"$ref": _URI + pointer}
        valid = Draft202012Validator(
            schema, registry=self.registry, format_checker=checker
        )
        return bool(valid.is_valid(value))

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
        responses = self.doc.get(f"{op.pointer}/responses") or {}
        keys = [
            k for k in (str(status), f"{status // 100}XX", "default") if k in responses
        ]
        label = f"{op.operation_id} {status}"
        self.touched.add(op.pointer)
        if keys:
            self.response(
                label, self.doc.at(f"{op.pointer}/responses/{keys[0]}")[1], answer
            )
            return
        self.found(
            "status", label, f"answered {answer['n']} time(s), not declared", op.pointer
        )
        media = {m for m in answer["media"] if m}
        for (
            other
        ) in self.spec.operations:  # another's response of this status that fits
            ref = (self.doc.get(f"{other.pointer}/responses") or {}).get(
                str(status)
            ) or {}
            target = self.doc.get(str(ref.get("$ref"))) or {}
            if "$ref" in ref and media <= set(target.get("content") or {}):
                self.response(label, self.doc.at(ref["$ref"])[1], answer)
                return self.edit("add", f"{op.pointer}/responses", str(status), ref)
        new: Shape = {"description": f"Answered in a sample of {self.date}."}
        content = {m: {"schema": self.schema(m, answer)} for m in media}
        headers = {h: {"schema": {"type": "string"}} for h in answer["headers"]}
        new |= {"content": content} if content else {}
        new |= {"headers": headers} if headers else {}
        self.edit(
            "add",
            f"{op.pointer}/responses",
            str(status),
            new | {"x-observed": self.date},
        )

    def schema(self, media: str, answer: Shape) -> Shape:
        return (
            learned(answer["body"])
            if is_json(media) and "body" in answer
            else {"type": "string"}
        )

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
            merge(self.headers.setdefault(name, {}), {label.split()[-1]: seen["forms"]})
            if name in declared:
                pointer = f"{where}/headers/{declared[name]}"
                self.touched.update((pointer, self.doc.at(pointer)[1]))
                continue
            self.found("header", label, f"{name}, not declared")
            new = {"schema": {"type": "string"}, "x-observed": self.date}
            self.edit("add", f"{where}/headers", name, new)
        for name, key in declared.items():
            header = self.doc.get(f"{where}/headers/{key}") or {}
            if header.get("required") and name not in answer["headers"]:
                self.found(
                    "header never sent",
                    label,
                    f"{name}, required",
                    where,
                    note=True,
                )

    def walk(self, shape: Shape, raw: str, depth: int = 0) -> None:
        """Note what ``shape`` saw at the schema at ``raw``, then at its fields and items."""
        self.touched.update((raw, self.doc.at(raw)[1]))
        merge(
            self.seen.setdefault(raw, {}),
            {k: v for k, v in shape.items() if k not in ("fields", "items")},
        )
        fields = shape.get("fields", {}) if depth < MAX_DEPTH else {}
        home = self.home(raw) if fields else None
        if home:
            objects = shape["types"].get("object", 0)
            merge(
                self.objects.setdefault(home, {}),
                {"n": objects, "fields": dict.fromkeys(fields, 1)},
            )
        for name, sub in fields.items():
            if pointer := self.find(raw, f"properties/{_escape(name)}"):
                self.walk(sub, pointer, depth + 1)
            elif home:
                merge(self.undeclared.setdefault((home, name), {}), sub)
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
        said = f"{said} ({node['format']})" if "format" in node else said
        misfits = (raw, self.doc.at(raw)[1])
        for kind in bad:
            like = f' like "{shape.get("example")}"' if kind == "string" else ""
            detail = f"declared {said}, {kind} in {types[kind]} of {n}{like}"
            self.found(
                "null" if kind == "null" else "type", _label(raw), detail, *misfits
            )
        for form in wrong:
            detail = f"declared {said}, {form} in {formats[form]} of {n}"
            self.found("format", _label(raw), detail, *misfits)
        if bad or wrong:
            self.edit("widen", raw, [learned(shape, t) for t in bad], bool(wrong))
        self.words(_label(raw), shape, "enum" in (self.doc.get(raw) or {}))

    def words(self, where: str, shape: Shape, closed: bool = False) -> None:
        """Report the few words a string field took (``--enums``) as enum candidates."""
        words = shape.get("values", {})
        every = sum(words.values()) == shape["types"].get("string")
        if 1 < len(words) <= 8 and every and not closed:
            self.found("enum candidate", where, ", ".join(words), note=True)

    def pages(self, op: Operation, pages: list[Shape]) -> None:
        """Report the pages a list answered; judge ``pageNumber`` and ``data`` by them."""
        served = [p for p in pages if "records" in p]
        if not served:
            return
        total = served[0]["totalRecords"]
        last = -(-total // 50) if isinstance(total, int) else 0
        said = [
            f"{p['asked'] or 1}/{p['size'] if p['asked'] else '-'}: {p['records']} records, "
            f"pageSize {p['pageSize']}, totalRecords {p['totalRecords']}"
            + "".join(f", {k}" for k in ("next", "previous") if p[k])
            for p in served
        ]
        self.facts.append(
            f"{op.operation_id} pages (number/size asked): {'; '.join(said)}"
        )
        pointer = op.parameter("pageNumber")
        past = [p for p in pages if p["asked"] == last + 1]
        if past and pointer and pointer.pointer:
            node = pointer.pointer.removesuffix("/schema")
            self.touched.add(node)
            if past[0].get("records") != 0:
                self.misfits.add(node)
        success = op.success.pointer if op.success else None
        data = self.find(success, "properties/data") if success else None
        if data:
            self.touched.add(data)
            most = (self.doc.get(data) or {}).get("maxItems", math.inf)
            for page in served:
                size = min(page["pageSize"] or 0, most)
                if page["records"] > size or (
                    not page["records"] and (page["asked"] or 1) <= last
                ):
                    self.misfits.add(data)

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
        for raw, shape in self.seen.items():
            self.judge(raw, shape)
        for (home, name), shape in self.undeclared.items():
            kind = "/".join(t for t in _ORDER if t in shape["types"])
            formats = list(shape.get("formats", {}))
            form = (
                f" ({formats[0]})" if len(formats) == 1 and formats != ["text"] else ""
            )
            detail = f"{kind}{form} in {shape['n']} of {self.objects[home]['n']}"
            self.found("undeclared field", f"{_label(home)}.{name}", detail)
            self.words(f"{_label(home)}.{name}", shape)
            self.edit(
                "add",
                f"{home}/properties",
                name,
                learned(shape) | {"x-observed": self.date},
            )
        for home, seen in self.objects.items():
            for name in set((self.doc.get(home) or {}).get("properties") or {}) - set(
                seen["fields"]
            ):
                detail = f"in none of {seen['n']} objects"
                self.found("never seen", f"{_label(home)}.{name}", detail, note=True)
        for name, forms in sorted(self.headers.items()):
            said = [f for each in forms.values() for f in each]
            shown = f": {' | '.join(dict.fromkeys(said))}" if said else ""
            self.facts.append(f"{name} on {', '.join(sorted(forms))}{shown}")
        if not any("rate" in name or name == "retry-after" for name in self.headers):
            self.facts.append("rate-limit headers: none seen")

    def assumed(self) -> dict[str, str]:
        """Each ``x-assumed``'s pointer: confirmed, refuted or not observed."""
        verdicts = {}
        for pointer in _assumed(self.doc.document):
            verdict = "not observed"
            for places, said in (
                (self.touched, "confirmed"),
                (self.misfits, "refuted"),
            ):
                if any(f"{p}/".startswith(f"{pointer}/") for p in places):
                    verdict = said
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
    data = observation.data
    return Report(
        spec_path=spec.document.path,
        fingerprint=fingerprint,
        requests=data["requests"],
        stopped=bool(data.get("stopped")),
        findings=list(first.findings.values()),
        facts=first.facts,
        assumptions=first.assumed(),
        edits=list(first.edits.values()),
        marks=marks,
    )
