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

What the sample saw of the service's behaviour is judged too: a field the schema
requires and an answer lacks, a probe (a request the spec says is refused) answered
2XX, a ``pageSize`` up to the spec's limit refused with 400, and pages whose
``totalRecords``, records, ``next`` and ``previous`` contradict each other. A body of a
response whose schema is shared with others, that fits none of it, gets a schema of
its own (named after the response) instead of fields added to the shared one. Each
finding is at one place, once, with what the client does about it; its edits are the
patch, and the patch holds nothing else.

An ``x-assumed`` is *confirmed* when something seen bears on its node (the node or one
under it) and all of it fits, *refuted* when something there does not fit, *not
observed* otherwise; the patch marks ``x-observed: DATE`` beside each one seen (one
refuted holds once the patch fixed it). The pages a list answered, and the forms of the
headers kept, are reported as facts.
"""

from __future__ import annotations

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

from service_api_spec import Operation, Spec, escape, is_json, unescape

from ._observation import MAX_DEPTH, TYPES, Shape, merge
from ._report import Edit, Finding, Report
from ._sample import page_limit

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


def _or_null(check: Any) -> Any:
    """The keyword ``check``, which takes null where its schema says 3.0's ``nullable:
    true`` (read in either dialect, as the spec model reads it)."""

    def checked(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        if instance is None and schema.get("nullable") is True:
            return
        yield from check(validator, value, instance, schema)

    return checked


_Typed = validators.create(
    meta_schema=Draft202012Validator.META_SCHEMA,
    validators={"$ref": _KEYWORDS["$ref"]}
    | {k: _or_null(_KEYWORDS[k]) for k in ("allOf", "anyOf", "type", "format")}
    | {"oneOf": _or_null(_KEYWORDS["anyOf"])},
)
_CHOICES = ("allOf", "anyOf", "oneOf")
# What does not fit refutes an x-assumed there; a field or a header more does not.
_MISFITS = ("type", "null", "format", "status", "content type", "required", "body")
#: The share of the objects seen a field the spec does not declare must be in to be
#: written (``--min-share``): a real service's optional field is in more, while a
#: generator that invents properties (Prism's dynamic mode) puts each in one or two.
MIN_SHARE = 0.05
#: Times an undeclared field must be seen, among more objects, to be written.
RARE = 3
_NO_SPEC = "the spec cannot say this: tell the service's owners"
_RARE_LISTED = 5  # rare fields of one schema listed one a line; the others summed


def _share(share: float) -> str:
    """``share`` as a percentage: one decimal below 1 % (``0.3%``), else none."""
    return f"{share:.{int(share < 0.01)}%}"


def _label(pointer: str) -> str:
    """A place of the spec for people: ``Shipment.status``, ``responses/NotFound``."""
    text = pointer.removeprefix("#/components/schemas/").removeprefix("#/components/")
    text = text.replace("/properties/", ".").replace("/items", "[]")
    return unescape(text)


def _key(pointer: str) -> str:
    """The last key of ``pointer``, unescaped: a field's name."""
    return unescape(pointer.rpartition("/")[2])


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

    def __init__(self, spec: Spec, min_share: float = MIN_SHARE) -> None:
        self.spec = spec
        self.doc = spec.document
        self.min_share = min_share
        self.date = datetime.date.today().isoformat()
        self.findings: dict[tuple[str, str], Finding] = {}
        # The JSON bodies seen, summed by the schema pointer of the answer they came in,
        # with the response (its pointer, a label, the operation and status) they are of.
        self.bodies: dict[str, tuple[Shape, str, str, str]] = {}
        # The responses whose JSON body's schema leads to each schema.
        self.sharing: dict[str, set[str]] = defaultdict(set)
        for op in spec.operations:
            for key, declared in op.answers.items():
                if declared.pointer and is_json(str(declared.media)):
                    target = self.doc.at(declared.pointer)[1]
                    self.sharing[target].add(
                        self.doc.at(f"{op.pointer}/responses/{key}")[1]
                    )
        # What was seen, summed: by schema pointer; the objects by the ``properties``
        # that declare their fields; the pointers of the fields those do not declare.
        self.seen: dict[str, Shape] = defaultdict(dict)
        self.objects: dict[str, Shape] = defaultdict(dict)
        self.undeclared: set[str] = set()
        self.loose: set[str] = set()
        """The ``properties`` reached through a choice with an option that takes any
        object: what they require is not required of the objects seen there."""
        self.touched: set[str] = set()
        self.misfits: set[str] = set()

    def touch(self, pointer: str) -> str:
        """Note the node at ``pointer`` and where its ``$ref`` leads as seen; the latter."""
        where = self.doc.at(pointer)[1]
        self.touched |= {pointer, where}
        return where

    def found(
        self,
        kind: str,
        where: str,
        detail: str,
        *edits: Edit,
        effect: str = "",
        difference: bool | None = None,
    ) -> None:
        """A finding at the place ``where``, once; with the ``edits`` that fix it, a
        difference, else a note unless ``difference``."""
        if (kind, where) in self.findings:
            return
        difference = bool(edits) if difference is None else difference
        self.findings[(kind, where)] = Finding(
            kind, where, detail, difference, effect, edits
        )
        if edits and kind in _MISFITS:
            self.misfits.add(edits[-1][0])

    def required(self, pointer: str) -> bool:
        """Whether the field at ``pointer`` (``.../properties/NAME``) is required."""
        parent = pointer.rpartition("/properties/")[0]
        names = self.doc.get(f"{parent}/required") if parent else None
        return isinstance(names, list) and _key(pointer) in names

    def valid(self, pointer: str, value: Any) -> bool:
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
            effect = f"the client raises its error for {status}, which no doc names"
            if status < 400:
                effect = "the client has no schema to read it by"
            self.found("status", label, "not declared", edit, effect=effect)
            return
        where = self.touch(f"{op.pointer}/responses/{escape(declared.status)}")
        node = self.doc.get(where)
        if where.startswith("#/components/"):
            label = _label(where)
        declared_media = node.get("content") or {}
        content = [str(m).lower() for m in declared_media]
        for media in answer["media"]:
            if media not in content:
                new = self.media(media, answer)
                edit = (f"{where}/content/{escape(media)}", "add", new)
                effect = "the client does not read it by a schema"
                self.found(
                    "content type",
                    f"{label} {media}",
                    "not declared",
                    edit,
                    effect=effect,
                )
        if "body" in answer and declared.pointer and is_json(str(declared.media)):
            body = self.bodies.setdefault(
                declared.pointer, ({}, where, label, f"{op.operation_id} {status}")
            )
            merge(body[0], answer["body"])
        declared_headers = node.get("headers") or {}
        headers = {str(h).lower(): escape(str(h)) for h in declared_headers}
        for name in answer["headers"]:
            if name in headers:
                self.touch(f"{where}/headers/{headers[name]}")
            else:
                new = {"schema": {"type": "string"}, "x-observed": self.date}
                edit = (f"{where}/headers/{escape(name)}", "add", new)
                effect = "the client does not read it"
                self.found(
                    "header", f"{label} {name}", "not declared", edit, effect=effect
                )

    def fits(self, schema: str, body: Shape) -> bool:
        """Whether ``body`` fits the object schema at ``schema``: objects only, of whose
        usual fields (in half of them or more) it declares half or more. A field more,
        or one missing, is a finding of its own; a body of other fields is of another
        schema."""
        objects = body["types"].get("object", 0)
        fields = body.get("fields", {})
        usual = [
            n for n, f in fields.items() if 2 * sum(f["types"].values()) >= objects
        ]
        declared = [n for n in usual if self.find(schema, f"properties/{escape(n)}")]
        return set(body["types"]) == {"object"} and 2 * len(declared) >= len(usual)

    def body(
        self, pointer: str, body: Shape, response: str, label: str, answer: str
    ) -> None:
        """Walk ``body``, seen in ``response`` whose schema is at ``pointer``; a body
        that fits none of a schema the response shares with other responses gets a
        schema of its own, named after the response, instead."""
        target = self.doc.at(pointer)[1]
        if len(self.sharing[target]) < 2 or self.fits(target, body):
            self.walk(body, pointer)
            return
        self.touch(pointer)
        name = (
            response.rpartition("/")[2] if response.startswith("#/components/") else ""
        )
        name = name or answer.replace(" ", "")
        name = name[0].upper() + name[1:]
        while self.doc.get(f"#/components/schemas/{escape(name)}") is not None:
            name += "Body"
        new = f"#/components/schemas/{escape(name)}"
        fields = list(body.get("fields", {}))
        seen = ", ".join(fields[:6]) or "/".join(body["types"])
        others = len(self.sharing[target]) - 1
        self.found(
            "body",
            label,
            f"{seen}: fits none of {_label(target)} (shared with {others} other responses)",
            (new, "add", learned(body) | {"x-observed": self.date}),
            (pointer, "set", {"$ref": new}),
            effect=f"the client reads none of it; --write gives it a schema of its own, {name}",
        )

    def walk(self, shape: Shape, raw: str) -> None:
        """Sum what ``shape`` saw at the schema at ``raw``, then at its fields and items."""
        self.touch(raw)
        merge(self.seen[raw], shape)
        fields = shape.get("fields", {})
        declared = self.home(raw) if fields else None
        if declared:
            merge(self.objects[declared], shape)
            if self.open_option(raw):
                self.loose.add(declared)
        # A map (``additionalProperties`` a schema) declares every other key: each
        # value is judged by that schema, no key is a field the spec lacks.
        extra = self.find(raw, "additionalProperties")
        if extra is not None and not isinstance(self.doc.get(extra), dict):
            extra = None
        for name, field in fields.items():
            if pointer := self.find(raw, f"properties/{escape(name)}"):
                self.walk(field, pointer)
            elif extra is not None:
                self.walk(field, extra)
            elif declared:
                self.undeclared.add(f"{declared}/{escape(name)}")
        if "items" in shape and (items := self.find(raw, "items")):
            self.walk(shape["items"], items)

    def open_option(self, raw: str) -> bool:
        """Whether the schema at ``raw`` is a choice one of whose options takes any
        object (``anyOf: [$ref, {type: object, nullable: true}]``): an object there
        need not have the fields another option requires."""
        node, _ = self.doc.at(raw)
        options = [
            option
            for key in ("anyOf", "oneOf")
            for option in (node.get(key) or () if isinstance(node, dict) else ())
        ]
        return any(
            isinstance(o, dict)
            and not {"$ref", "required", "properties", "allOf", "anyOf", "oneOf"}
            & set(o)
            and o.get("type", "object") == "object"
            for o in options
        )

    def judge(self, raw: str, shape: Shape) -> None:
        """Whether each type (and string format) seen at ``raw`` fits its schema."""
        types = shape["types"]
        count = sum(types.values())
        seen = [kind for kind in TYPES if kind in types]
        bad = [kind for kind in seen if not self.valid(raw, _VALUES[kind])]
        formats = {} if "string" in bad else shape.get("formats", {})
        wrong = [f for f in formats if not self.valid(raw, f)]
        options = [learned(shape, (t,)) for t in bad]
        if wrong:
            options.append({"type": "string"})  # a string of no format: drop it
        edit = (raw, "widen", options)
        name = _key(raw)
        effect = f'the client leaves the attribute UNSET, the value in record["{name}"]'
        if self.required(raw):
            effect = "the client cannot read the answer (InvalidResponseError)"
        elif "/properties/" not in raw:
            effect = "the client may not read it"
        for kind in bad:
            like = f' like "{shape["example"]}"' if kind == "string" else ""
            detail = f"{kind} in {types[kind]} of {count}{like}, not allowed"
            kind = "null" if kind == "null" else "type"
            self.found(kind, _label(raw), detail, edit, effect=effect)
        for form in wrong:
            detail = f"{form} in {formats[form]} of {count}, not of the format declared"
            self.found("format", _label(raw), detail, edit, effect=effect)
        self.words(raw, shape)

    def words(self, pointer: str, shape: Shape) -> None:
        """Report the few words a string field took (``--enums``) as enum candidates."""
        words = shape.get("values", {})
        every = sum(words.values()) == shape["types"].get("string")
        if len(words) > 1 and every:
            self.found("enum candidate", _label(pointer), ", ".join(words))

    def undeclare(self, pointer: str, shape: Shape, objects: int) -> str | None:
        """Report the field at ``pointer`` the spec does not declare, and add it; or,
        seen in too few of the ``objects`` to be written, the note that says so."""
        kinds = "/".join(t for t in TYPES if t in shape["types"])
        formats = list(shape.get("formats", {}))
        if len(formats) == 1 and formats != ["text"]:
            kinds += f" ({formats[0]})"
        count = sum(shape["types"].values())
        detail = f"{kinds} in {count} of {objects} ({_share(count / objects)})"
        name = _key(pointer)
        self.words(pointer, shape)
        # Once or twice among more objects is no evidence either (unless asked for
        # none): a server that invents fields (Prism's dynamic mode) draws a name twice
        # in a small sample by chance.
        few = count < RARE and objects > count and self.min_share > 0
        if count / objects < self.min_share or few:
            return f"{detail}, below --min-share {_share(self.min_share)} or under {RARE} of more"
        new = learned(shape) | {"x-observed": self.date}
        effect = f'the client keeps it untyped, record["{name}"]'
        self.found(
            "undeclared field",
            _label(pointer),
            detail,
            (pointer, "add", new),
            effect=effect,
        )
        return None

    def run(self, spec: Spec, observation: Shape) -> None:
        """Compare everything ``observation`` holds."""
        operations = {f"{op.method} {op.path}": op for op in spec.operations}
        for key, answer in sorted(observation["answers"].items()):
            route, _, status = key.rpartition(" ")
            if op := operations.get(route):
                self.answer(op, int(status), answer)
        for pointer, (body, response, label, where) in self.bodies.items():
            self.body(pointer, body, response, label, where)
        for raw, shape in self.seen.items():
            self.judge(raw, shape)
        for declared, seen in self.objects.items():
            self.fields(declared, seen)
        by_id = {op.operation_id: op for op in spec.operations}
        probed = observation.get("probes", {})
        for operation_id, probes in sorted(probed.items()):
            if operation_id in by_id:
                self.probes(by_id[operation_id], probes)
        sizes = observation.get("sizes", {})

        # The smallest size accepted first: lists that share a pageSize get it.
        def accepted(item: tuple[str, dict[str, int]]) -> int:
            return item[1].get("accepted", 0)

        for operation_id, size in sorted(sizes.items(), key=accepted):
            if operation_id in by_id and "refused" in size:
                self.size(by_id[operation_id], size)
        for operation_id, pages in sorted(observation.get("pages", {}).items()):
            self.paging(operation_id, pages)

    def fields(self, declared: str, seen: Shape) -> None:
        """The fields of the objects seen at the ``properties`` at ``declared``: those it
        requires and some lacked, those never seen, those it does not declare."""
        objects = seen["types"]["object"]
        parent = declared.removesuffix("/properties")
        required = self.doc.get(f"{parent}/required") or ()
        for name in self.doc.get(declared) or {}:
            field = seen["fields"].get(name, {})
            count = sum(field.get("types", {}).values())
            where = _label(f"{declared}/{escape(str(name))}")
            if name in required and count < objects and declared not in self.loose:
                self.found(
                    "required",
                    where,
                    f"missing in {objects - count} of {objects} objects, required",
                    (f"{parent}/required", "unrequire", name),
                    effect="the client cannot read the answer (InvalidResponseError)",
                )
            elif not count:
                self.found("never seen", where, f"in none of {objects} objects")
        rare: dict[str, int] = {}
        for name, field in seen["fields"].items():
            pointer = f"{declared}/{escape(name)}"
            said = pointer in self.undeclared and self.undeclare(
                pointer, field, objects
            )
            if said:
                rare[name] = sum(field["types"].values())
                if len(rare) <= _RARE_LISTED:
                    self.found("rare field", _label(pointer), f"{said}: not written")
        if len(rare) > _RARE_LISTED:  # a generator's invented fields: in one line
            most = max(rare.values())
            shown = ", ".join(list(rare)[_RARE_LISTED:][:_RARE_LISTED])
            self.found(
                "rare fields",
                _label(parent),
                f"{len(rare) - _RARE_LISTED} more fields, each in at most {most} of "
                f"{objects} ({_share(most / objects)}): {shown}, ...: not written",
            )

    def probes(self, op: Operation, probes: dict[str, int]) -> None:
        """A probe (a request the spec says is refused) answered 2XX is a difference."""
        refusals = [key for key in op.answers if key.startswith("4")]
        declared = ", ".join(sorted(refusals)) or "no 4XX"
        for name, status in sorted(probes.items()):
            if 200 <= status < 300:
                self.found(
                    "probe",
                    f"{op.operation_id} {name}",
                    f"answered {status}, where the spec declares {declared}",
                    effect=f"the client never gets the refusal the spec says; {_NO_SPEC}",
                    difference=True,
                )

    def size(self, op: Operation, size: dict[str, int]) -> None:
        """A ``pageSize`` up to the spec's limit refused: lower the limit to the largest
        size accepted, where the sample found it."""
        most, pointer = page_limit(self.spec, op)
        accepted = size.get("accepted")
        refused = size["refused"]
        edits: list[Edit] = []
        found = f"the largest accepted is {accepted}"
        if accepted is None or accepted + 1 != refused:
            found = (
                f"the largest accepted is below {refused}, not found within the budget"
            )
        elif pointer:
            edits.append((f"{pointer}/maximum", "set", accepted))
            default = self.doc.get(f"{pointer}/default")
            if type(default) is int and default > accepted:
                edits.append((f"{pointer}/default", "set", accepted))
        fix = f"pass page_size={accepted}" if accepted else "raise --budget to find it"
        if edits:  # the client asks the spec's limit: the one written, after make
            fix = f"after --write and make it asks {accepted}; until then {fix}"
        self.found(
            "page size",
            f"{op.operation_id} pageSize",
            f"{most} (the spec's limit) was refused; {found}",
            *edits,
            effect=f"the client's pages of {most} fail (BadRequestError): {fix}",
            difference=True,
        )

    def paging(self, operation_id: str, pages: list[dict[str, Any]]) -> None:
        """Pages whose ``totalRecords``, records, ``next`` and ``previous`` contradict
        each other (as the spec's page envelope describes them)."""
        wrong = []
        for page in pages:
            number, size, total = page["number"], page["size"], page["total"]
            if type(total) is not int or type(size) is not int or size < 1:
                continue
            last = math.ceil(total / size)
            held = max(0, min(size, total - (number - 1) * size))
            said = []
            if page["records"] != held:
                said.append(
                    f"{page['records']} records where totalRecords {total} makes {held}"
                )
            if page["next"] != (number < last):
                said.append("next" if page["next"] else "no next")
            if page["previous"] != (1 <= number - 1 <= last):
                said.append("previous" if page["previous"] else "no previous")
            if said:
                wrong.append(f"page {number} of {size}: {', '.join(said)}")
        if wrong:
            self.found(
                "paging",
                f"{operation_id} pages",
                "; ".join(list(dict.fromkeys(wrong))[:3]),
                effect=f"the client pages by them: records missed or asked twice; {_NO_SPEC}",
                difference=True,
            )


def compare(
    spec: Spec,
    observation: Shape,
    *,
    original: bytes | None = None,
    min_share: float = MIN_SHARE,
) -> Report:
    """The report of ``observation`` (see :mod:`._observation`) against ``spec`` and its
    patch: the edits, and the ``x-observed: DATE`` marks of each ``x-assumed`` seen.
    ``original``: the spec file's bytes, which :meth:`Report.write` finds unchanged;
    ``min_share``: the share of the objects seen an undeclared field must be in to be
    written (below, it is a note).

    Example::

        report = compare(load_spec("openapi.yaml"), load("observed.json"))
        print(report.text())
    """
    check = _Comparison(spec, min_share)
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
    facts += [f"writes: {done}" for done in observation.get("writes", ())]
    facts += [f"not sent: {why}" for why in observation.get("unsent", ())]
    return Report(
        spec.document.path,
        original,
        observation,
        list(check.findings.values()),
        facts=facts,
        assumptions=verdicts,
        marks=marks,
    )
