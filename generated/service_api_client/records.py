"""The base of every generated model: a record that reads whatever the service sends.

Written by hand and copied as it is into the generated package by codegen/generate.py;
each generated model declares its attributes (attrs) and, at the end of its module, its
field table (:meth:`Record._declare`): each field's JSON name, attribute, kind, whether
it is required. Everything else is here, once:

Lenient reading. A value whose JSON type does not fit its field's kind is not forced
into the attribute: the attribute is ``UNSET`` and the value stays, as sent, in
``additional_properties`` under its JSON name (so ``record["shipFromDate"]`` still reads
it). A matching value is checked, not cast, so an attribute's type is always true.
Date-times, dates and UUIDs are parsed (``fromisoformat``, ``UUID``), a map's values
too, and the string sent is kept beside the parsed value, so that ``to_dict()`` gives
back exactly what was sent (``"Z"`` is not rewritten ``"+00:00"``); a new value
assigned to the attribute is written with ``isoformat()`` / ``str()``.

Tolerant. A required field left out is ``UNSET`` (though its attribute is typed as the
spec says), a value that does not fit a required field is kept as sent, and a field that
``additionalProperties: false`` forbids is kept in ``additional_properties``: none of them
raises, each is told as drift (:mod:`.drift`) to the client that read the answer. A page
envelope is the exception (``strict``): the pager needs its required fields, so a missing
one is a ``KeyError`` and one that does not fit a ``TypeError``, as the generator's models
raise. ``from_dict`` of anything but a JSON object is a ``TypeError`` naming the model.

Fields by their JSON names. ``record["shipmentId"]``, ``record.get("status")``,
``"status" in record`` and ``record.keys()`` serve every field, declared (the attribute's
value; absent while ``UNSET``) or not (``additional_properties``), the way stripe-python's
objects do; ``keys()``, ``to_dict()`` and the repr keep the order the service sent the
fields in. ``repr(record)`` is bounded as :mod:`reprlib` bounds (long strings, lists and
nested records elided with ``...``) and leaves out the fields whose schema says
``format: password``, nested records' included.

Example::

    shipment = Shipment.from_dict({"shipmentId": 7, "status": "Planned"})
    shipment.shipment_id  # UNSET: 7 is no string
    shipment["shipmentId"]  # 7, as sent
    shipment.to_dict()  # {'shipmentId': 7, 'status': 'Planned'}
"""

from __future__ import annotations

import datetime
import functools
import reprlib
import uuid
from collections.abc import Callable, KeysView, Mapping
from typing import Any, ClassVar, NamedTuple, Self

from .drift import _LISTENING, DriftLog
from .types import UNSET

__all__ = [
    "ANY",
    "BOOLEAN",
    "DATE",
    "DATE_TIME",
    "INTEGER",
    "NULL",
    "NUMBER",
    "STRING",
    "UUID",
    "Field",
    "Kind",
    "Record",
    "enum",
    "list_of",
    "model",
    "union",
]

#: What a kind's ``read`` returns for a value that does not fit it.
MISS: Any = object()
_JSON_TYPES = {
    dict: "an object",
    list: "an array",
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


class Kind(NamedTuple):
    """What a field holds, as its spec says it: values of the types in ``exact`` are
    taken as they are; any other is given to ``read`` (None: refused), which returns the
    value to keep or :data:`MISS`.

    Attributes:
        says: the kind as the spec says it, for drift lines (``an integer``).
        sent: whether ``read`` may change how the value writes back (a date), so that
            the string sent is kept beside it.
        values: an enum's values (a value of the right type outside them is drift
            of its own: a new enum value).
        record: the record a JSON object becomes, when that is all ``read`` does
            beside ``exact`` (read without a call of ``read``: the common case, fast).
    """

    exact: tuple[type, ...]
    read: Callable[[Any], Any] | None
    says: str
    sent: bool = False
    values: tuple[Any, ...] = ()
    record: type[Record] | None = None


def _parsed(parse: Callable[[str], Any], says: str) -> Kind:
    def read(value: Any) -> Any:
        if type(value) is not str:
            return MISS
        try:
            return parse(value)
        except ValueError:
            return MISS

    return Kind((), read, says, sent=True)


STRING = Kind((str,), None, "a string")
INTEGER = Kind((int,), None, "an integer")
NUMBER = Kind((int, float), None, "a number")
BOOLEAN = Kind((bool,), None, "a boolean")
NULL = Kind((type(None),), None, "null")
ANY = Kind((), lambda value: value, "any value")
DATE_TIME = _parsed(datetime.datetime.fromisoformat, "a date-time")
DATE = _parsed(datetime.date.fromisoformat, "a date")
UUID = _parsed(uuid.UUID, "a UUID")


def enum(*values: Any) -> Kind:
    """One of ``values`` (compared by type too: ``True`` is not ``1``)."""
    types = tuple({type(v) for v in values})
    allowed = frozenset((type(v), v) for v in values)

    def read(value: Any) -> Any:
        if type(value) in types and (type(value), value) in allowed:
            return value
        return MISS

    shown = ", ".join(repr(v) for v in values)
    return Kind((), read, f"one of {shown}", values=values)


def model(cls: type[Record]) -> Kind:
    """A JSON object, read as the record ``cls``."""

    def read(value: Any) -> Any:
        if type(value) is not dict:
            return MISS
        try:
            return cls.from_dict(value)
        except (KeyError, TypeError, ValueError):  # a strict record refused it
            return MISS

    return Kind((), read, f"an object ({cls.__name__})", record=cls)


def _refuse() -> Any:
    raise TypeError("not a JSON object")


def list_of(item: Kind) -> Kind:
    """A JSON array whose every item is of the kind ``item``; one item that is not
    keeps the whole array as sent."""
    exact, read_item, record = item.exact, item.read, item.record

    def read(value: Any) -> Any:
        if type(value) is not list:
            return MISS
        if record is not None and not exact:  # records: read with no call between
            try:
                return [
                    record.from_dict(each) if type(each) is dict else _refuse()
                    for each in value
                ]
            except (KeyError, TypeError, ValueError):  # not an object, or refused
                return MISS
        if read_item is None:  # a for loop with break: no generator frame per list
            for each in value:
                if type(each) not in exact:
                    return MISS
            return list(value)
        items = []
        for each in value:
            if type(each) in exact:
                items.append(each)
            elif (parsed := read_item(each)) is not MISS:
                items.append(parsed)
            else:
                return MISS
        return items

    return Kind((), read, f"an array of {item.says}", sent=item.sent)


def union(
    *arms: Kind, on: str | None = None, mapping: Mapping[Any, int] | None = None
) -> Kind:
    """Any of ``arms``: the types each takes as they are, then each ``read`` in turn.

    A JSON object, where arms are records, is read as one of them: the arm its
    discriminator names (its property ``on``, whose value ``mapping`` maps to the arm's
    index), else the record whose declared fields fit it best: the first read with no
    drift, else the one with the fewest. Only the drift of the record chosen is told.
    """
    reads = [arm.read for arm in arms if arm.read is not None]
    records = [arm.record for arm in arms if arm.record is not None]
    chosen = {
        value: arms[index].record
        for value, index in (mapping or {}).items()
        if arms[index].record is not None
    }

    def read(value: Any) -> Any:
        if type(value) is dict and len(records) > 1:
            told = value.get(on) if on is not None else None
            named = chosen.get(told) if type(told) is str else None
            parsed = _fitting(value, records, named)
            if parsed is not MISS:
                return parsed
        for each in reads:
            if (parsed := each(value)) is not MISS:
                return parsed
        return MISS

    return Kind(
        tuple(t for arm in arms for t in arm.exact),
        # One arm to read: that arm's read itself, no call more per value.
        (reads[0] if len(reads) == 1 else read) if reads else None,
        " or ".join(arm.says for arm in arms),
        sent=any(arm.sent for arm in arms),
        values=tuple(v for arm in arms for v in arm.values),
        record=records[0] if len(reads) == 1 and records else None,
    )


class _Tally(DriftLog):
    """The drift of one trial read, kept to be counted (and told if it is chosen)."""

    def __init__(self) -> None:  # no lock, no callback: one read's, in one thread
        self.found: list[tuple[str, Any]] = []

    def add(self, place: str, seen: str | Callable[[], str]) -> None:
        self.found.append((place, seen))


def _fitting(value: dict[str, Any], records: list[type[Record]], named: Any) -> Any:
    """``value`` read as the record ``named`` (its discriminator's), else as the one of
    ``records`` it fits best; MISS when each refuses it (a strict record)."""
    best: tuple[Any, list[tuple[str, Any]]] | None = None
    for record in [named] if named is not None else records:
        tally = _Tally()
        token = _LISTENING.set(tally)
        try:
            parsed = record.from_dict(value)
        except (KeyError, TypeError, ValueError):  # a strict record refused it
            continue
        finally:
            _LISTENING.reset(token)
        if best is None or len(tally.found) < len(best[1]):
            best = (parsed, tally.found)
        if not tally.found:
            break
    if best is None:
        return MISS
    if (log := _LISTENING.get()) is not None:  # the chosen record's drift only
        for place, seen in best[1]:
            log.add(place, seen)
    return best[0]


class Field(NamedTuple):
    """One declared field of a record: its JSON ``name``, its ``attribute``, its
    ``kind``, whether the spec says it is ``required``, whether its schema says
    ``format: password`` (``secret``: never in a repr)."""

    name: str
    attribute: str
    kind: Kind
    required: bool = False
    secret: bool = False


def _written(value: Any) -> Any:
    """``value`` as JSON writes it: records as objects, dates as ISO strings."""
    if isinstance(value, Record):
        return value.to_dict()
    if type(value) is list:
        return [_written(item) for item in value]
    if type(value) is dict:
        return {key: _written(item) for key, item in value.items()}
    if isinstance(value, datetime.date):  # a datetime too
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


class _Shown(reprlib.Repr):
    """The bounds of a record's repr; nested records are shown as records (their own
    secret fields left out), within the same bounds."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxdict = 8
        self.maxlist = 4
        self.maxstring = 40
        self.maxother = 40

    def repr1(self, x: Any, level: int) -> str:
        if isinstance(x, Record):
            return f"{type(x).__name__}({self.repr1(x._shown(), level)})"
        return super().repr1(x, level)

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        """As reprlib's, but in the dict's own order (the order the fields came in)."""
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        shown = [
            f"{self.repr1(key, level - 1)}: {self.repr1(value, level - 1)}"
            for key, value in list(x.items())[: self.maxdict]
        ]
        if len(x) > self.maxdict:
            shown.append("...")
        return "{" + ", ".join(shown) + "}"


_SHOWN = _Shown()


class Record:
    """A record of the service: the base of every generated model (see the module).

    Example::

        device = Device.from_dict({"deviceId": "d-1", "battery": "low"})
        device.battery  # UNSET: "low" is no number
        device["battery"]  # "low", as sent
        dict(device)  # {'deviceId': 'd-1', 'battery': 'low'}
    """

    __slots__ = ()

    #: The declared fields, in the spec's order (set by :meth:`_declare`).
    _FIELDS: ClassVar[tuple[Field, ...]] = ()
    #: The attribute of each declared field, by its JSON name.
    _ATTRIBUTES: ClassVar[dict[str, str]] = {}
    #: The kind of the values of the fields not declared (None: any value).
    _EXTRA: ClassVar[Kind | None] = None
    #: Whether a field not declared is drift (the spec forbids or never names them).
    _UNDECLARED_DRIFT: ClassVar[bool] = True
    #: A page envelope: its required fields raise instead of being kept.
    _STRICT: ClassVar[bool] = False
    _SECRETS: ClassVar[frozenset[str]] = frozenset()

    # Attrs fields of every generated model (so that a copy keeps them):
    # the fields not declared, the order the fields came in, the strings sent of the
    # values parsed from them.
    additional_properties: dict[str, Any]
    _order: tuple[str, ...]
    _sent: dict[str, tuple[Any, Any]] | None

    @classmethod
    def _declare(
        cls,
        *fields: Field,
        extra: Kind | None = None,
        undeclared_drift: bool = True,
        strict: bool = False,
    ) -> None:
        """Set the field table of a generated model (at the end of its module, once the
        models it refers to are imported)."""
        cls._FIELDS = fields
        cls._ATTRIBUTES = {f.name: f.attribute for f in fields}
        cls._EXTRA = extra
        cls._UNDECLARED_DRIFT = undeclared_drift
        cls._STRICT = strict
        cls._SECRETS = frozenset(f.name for f in fields if f.secret)
        # setattr: mypy sees a method assigned, the reader is the method it stands for.
        setattr(cls, "from_dict", classmethod(_reader(cls)))  # noqa: B010

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        """The record of the JSON object ``src_dict`` (see the module for what a value
        that does not fit becomes); ``TypeError`` for anything but an object."""
        # Each model's own, written from its field table by _declare (_reader).
        raise TypeError(f"{cls.__name__} declares no field table")

    @classmethod
    def _miss(cls, d: dict[str, Any], name: str, value: Any) -> Any:
        """What a field whose value does not fit (or that is missing) becomes: UNSET,
        the value kept as sent in ``d``, the drift told; a page envelope's required
        field raises instead."""
        if value is not UNSET:
            d[name] = value
        field = next(f for f in cls._FIELDS if f.name == name)
        if value is UNSET and not field.required:
            return UNSET
        if field.required and cls._STRICT:
            if value is UNSET:
                raise KeyError(name)
            raise TypeError(f"{cls.__name__}.{name}: {_seen(value, field.kind)}")
        if (log := _LISTENING.get()) is not None:
            log.add(f"{cls.__name__}.{name}", _seen(value, field.kind))
        return UNSET

    @classmethod
    def _extras(
        cls, extras: dict[str, Any], sent: dict[str, tuple[Any, Any]] | None
    ) -> dict[str, tuple[Any, Any]] | None:
        """Read the fields not declared (a map's values), and tell those that are drift;
        ``sent`` with the string sent of each value parsed from one (a map of dates)."""
        log = _LISTENING.get()
        kind = cls._EXTRA
        for key, value in extras.items():
            if key in cls._ATTRIBUTES:  # a declared field's value, kept as sent: told
                continue
            if kind is not None and type(value) not in kind.exact:
                parsed = MISS if kind.read is None else kind.read(value)
                if parsed is not MISS:
                    extras[key] = parsed
                    if kind.sent and parsed is not value:
                        sent = {**(sent or {}), key: (parsed, value)}
                elif log is not None:
                    log.add(f"{cls.__name__}[{key!r}]", _seen(value, kind))
            elif log is not None and cls._UNDECLARED_DRIFT:
                log.add(f"{cls.__name__}.{key}", functools.partial(_undeclared, value))
        return sent

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON: the fields set, by JSON name, in the order they came
        (the strings sent for dates whose value was not changed)."""
        fields: dict[str, Any] = {}
        sent = self._sent
        for name, attribute, *_ in self._FIELDS:
            value = getattr(self, attribute)
            if value is UNSET:
                continue
            was = sent.get(name) if sent else None
            fields[name] = was[1] if was and was[0] is value else _written(value)
        for key, value in self.additional_properties.items():
            was = sent.get(key) if sent else None
            fields[key] = was[1] if was and was[0] is value else _written(value)
        if not self._order:
            return fields
        ordered = {key: fields.pop(key) for key in self._order if key in fields}
        ordered.update(fields)
        return ordered

    def _shown(self) -> dict[str, Any]:
        """The fields a repr shows: as sent, nested records as records, no secret."""
        written = self.to_dict()
        for name, attribute, *_ in self._FIELDS:
            value = getattr(self, attribute)
            if name in self._SECRETS:
                written.pop(name, None)
            elif isinstance(value, Record) or (
                type(value) is list and any(isinstance(v, Record) for v in value)
            ):
                written[name] = value
        return written

    def __repr__(self) -> str:
        """The record as it came, bounded: ``Shipment({'shipmentId': 's-1', ...})``."""
        return f"{type(self).__name__}({_SHOWN.repr(self._shown())})"

    def __getitem__(self, key: str) -> Any:
        """A field by its JSON name, declared or not: ``record["shipmentId"]``.

        A declared field gives its attribute's value, and is absent (KeyError) while
        UNSET, unless the value sent did not fit its type and is kept as sent; any other
        field gives its value as sent, or, in a map (``additionalProperties`` of a
        schema), as read by the map's kind (a record of the object sent).
        """
        name = self._ATTRIBUTES.get(key)
        if name is not None and (value := getattr(self, name)) is not UNSET:
            return value
        return self.additional_properties[key]

    def get(self, key: str, default: Any = None) -> Any:
        """A field by its JSON name, or ``default`` when it is absent:
        ``record.get("status")``."""
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        """Whether the record has the field of this JSON name: ``"status" in record``."""
        if not isinstance(key, str):
            return False
        name = self._ATTRIBUTES.get(key)
        if name is not None and getattr(self, name) is not UNSET:
            return True
        return key in self.additional_properties

    def keys(self) -> KeysView[str]:
        """The JSON names of the fields the record has, in the order they came (then
        those set since): ``dict(record)`` maps each to what ``record[name]`` gives."""
        names = [
            key
            for key, name in self._ATTRIBUTES.items()
            if getattr(self, name) is not UNSET
        ]
        found = dict.fromkeys([*names, *self.additional_properties])
        if not self._order:
            return found.keys()
        ordered = dict.fromkeys(key for key in self._order if key in found)
        return (ordered | found).keys()

    def __setitem__(self, key: str, value: Any) -> None:
        """Set a field that is not declared; a declared one is set by its attribute."""
        if key in self._ATTRIBUTES:
            raise TypeError(
                f"{key!r} is a declared field: set record.{self._ATTRIBUTES[key]}"
            )
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        """Remove a field that is not declared (or a declared one's value kept as sent)."""
        del self.additional_properties[key]


def _reader(cls: type[Record]) -> Callable[..., Any]:
    """The ``from_dict`` of ``cls``, written from its field table and compiled, as attrs
    and dataclasses write an ``__init__``: a loop over the table would read each field
    twice as slowly, and a page of records is parsed field by field.

    For each field, in the table's order: a value of an ``exact`` type is kept as it
    is; a JSON object of a record kind is read as that record; any other value goes
    through the kind's ``read``; what fits nothing is :meth:`Record._miss`'s.
    """
    env: dict[str, Any] = {
        "Mapping": Mapping,
        "UNSET": UNSET,
        "MISS": MISS,
        "LISTENING": _LISTENING,
        "new": object.__new__,
    }
    lines = [
        "def from_dict(cls, src_dict):",
        "    if type(src_dict) is not dict and not isinstance(src_dict, Mapping):",
        "        raise TypeError(f'{cls.__name__}.from_dict: expected a JSON object, '",
        "                        f'got {type(src_dict).__name__}')",
        "    d = dict(src_dict)",
        "    sent = None",
        "    self = new(cls)",
    ]
    for number, field in enumerate(cls._FIELDS):
        kind, attribute, name = field.kind, f"self.{field.attribute}", repr(field.name)
        lines.append(f"    value = d.pop({name}, UNSET)")
        branch = "if"
        if kind.exact:
            for each, exact in enumerate(kind.exact):
                env[f"type{number}_{each}"] = exact
            test = " or ".join(
                f"kind is type{number}_{each}" for each in range(len(kind.exact))
            )
            lines += [
                "    kind = type(value)",
                f"    if {test}:",
                f"        {attribute} = value",
            ]
            branch = "elif"
        if kind.record is not None:
            env[f"record{number}"] = kind.record
            lines += [
                f"    {branch} type(value) is dict:",
                "        try:",
                f"            {attribute} = record{number}.from_dict(value)",
                "        except (KeyError, TypeError, ValueError):  # a strict record",
                f"            {attribute} = cls._miss(d, {name}, value)",
            ]
            branch = "elif"
        elif kind.read is not None:
            env[f"read{number}"] = kind.read
            lines += [
                f"    {branch} value is not UNSET and "
                f"(parsed := read{number}(value)) is not MISS:",
                f"        {attribute} = parsed",
            ]
            if kind.sent:
                lines += [
                    "        if parsed is not value:",
                    "            if sent is None:",
                    "                sent = {}",
                    f"            sent[{name}] = (parsed, value)",
                ]
            branch = "elif"
        if not field.required:  # absent: UNSET, with no call
            lines += [f"    {branch} value is UNSET:", f"        {attribute} = UNSET"]
            branch = "elif"
        lines += [
            f"    {'else' if branch == 'elif' else 'if True'}:",
            f"        {attribute} = cls._miss(d, {name}, value)",
        ]
    lines += [
        "    if d and (cls._EXTRA is not None or LISTENING.get() is not None):",
        "        sent = cls._extras(d, sent)",
        "    self.additional_properties = d",
        "    self._order = tuple(src_dict)",
        "    self._sent = sent",
        "    return self",
    ]
    exec(compile("\n".join(lines), f"<{cls.__name__}.from_dict>", "exec"), env)  # noqa: S102
    reader: Callable[..., Any] = env["from_dict"]
    reader.__doc__ = Record.from_dict.__doc__
    reader.__qualname__ = f"{cls.__name__}.from_dict"
    return reader


def _undeclared(value: Any) -> str:
    return (
        f"a field the spec does not declare ({_JSON_TYPES.get(type(value), 'a value')})"
    )


def _seen(value: Any, kind: Kind) -> str:
    """What a drift line says of ``value``, which does not fit ``kind``."""
    if value is UNSET:
        return "a required field left out"
    if kind.values and type(value) in {type(v) for v in kind.values}:
        return f"a value outside its enum: {reprlib.repr(value)}"
    if value is None:
        return f"null where the spec says {kind.says}"
    shown = _JSON_TYPES.get(type(value), type(value).__name__)
    return f"{shown} where the spec says {kind.says}"
