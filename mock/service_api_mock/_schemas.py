"""The spec's JSON Schemas as the mock uses them: validators, and values built to fit.

The ground floor of the mock: it reads the spec model (:mod:`service_api_spec`, whose
``Schemas.json_schema`` gives each schema as plain JSON Schema for a direction) and no
other module of the mock but the builder (:mod:`._build`); every other module of the
mock may read it.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping
from typing import Any

from jsonschema import (  # type: ignore[import-untyped]  # no stubs kept
    Draft202012Validator,
    FormatChecker,
    ValidationError,
    validators,
)
from jsonschema.protocols import Validator  # type: ignore[import-untyped]
from referencing.exceptions import Unresolvable

import service_api_spec
from service_api_spec import Direction

from ._build import _INT_RANGES, EPOCH, Unbuildable, ValueBuilder, iso

__all__ = ["EPOCH", "Direction", "Schemas", "Unbuildable", "iso"]

# A built value that does not fit (a second pattern, a oneOf matched twice...) is built
# again with the next draws, this many times in all.
_ATTEMPTS = 4


def _formats() -> FormatChecker:
    """The formats JSON Schema 2020-12 checks, OpenAPI's integer ones (``int32``,
    ``int64``: a number outside their range is refused, as clients check it), and
    ``uri``."""
    checker = FormatChecker(formats=())
    checker.checkers = dict(Draft202012Validator.FORMAT_CHECKER.checkers)
    for name, (low, high) in _INT_RANGES.items():

        def fits(value: object, low: int = low, high: int = high) -> bool:
            whole = isinstance(value, int) and not isinstance(value, bool)
            return not whole or low <= value <= high  # type: ignore[operator]

        checker.checks(name)(fits)
    if "uri" not in checker.checkers:
        # jsonschema checks a URI only with an optional package; a scheme first (RFC
        # 3986) and no blank is what clients' checks ask at least.
        checker.checks("uri")(
            lambda value: not isinstance(value, str) or bool(_URI.fullmatch(value))
        )
    return checker


_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]*")


_FORMATS = _formats()


@functools.lru_cache(maxsize=1024)
def _ecma(pattern: str) -> re.Pattern[str]:
    # JSON Schema's patterns are ECMA-262's, whose \w and \d are ASCII: Python's
    # are not unless told (an "É" is no \w to a client's validator, nor to the mock).
    return re.compile(pattern, re.ASCII)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and not _ecma(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_Validator = validators.extend(Draft202012Validator, {"pattern": _pattern})


class Schemas:
    """The schemas of one spec document, by JSON pointer and :data:`Direction`: a
    validator for each (made on first use), and values built to fit them.

    Example::

        schemas = Schemas(spec.schemas)
        schemas.error("#/components/schemas/Shipment", {"shipmentId": 1})  # "shipmentId: ..."
        schemas.build("#/components/schemas/Shipment", random.Random(0))
    """

    def __init__(self, model: service_api_spec.Schemas) -> None:
        self.model = model
        self.document = model.document
        self._json: dict[tuple[str, Direction], Mapping[str, Any]] = {}
        self._validators: dict[tuple[str, Direction], Validator] = {}
        self._fits: dict[str, bool] = {}

    def json_schema(
        self, pointer: str, direction: Direction = "reading"
    ) -> Mapping[str, Any]:
        """The schema at ``pointer`` as plain JSON Schema (2020-12), as ``direction``
        sees it, every schema it refers to under ``$defs`` (the model's conversion,
        made once).

        Example::

            jsonschema.validate(answer, schemas.json_schema(pointer))
        """
        found = self._json.get((pointer, direction))
        if found is None:
            found = self.model.json_schema(pointer, direction)
            self._json[pointer, direction] = found
        return found

    def validator(self, pointer: str, direction: Direction = "reading") -> Validator:
        """The validator of the schema at ``pointer`` (formats checked)."""
        found = self._validators.get((pointer, direction))
        if found is None:
            found = _Validator(
                self.json_schema(pointer, direction),
                format_checker=_FORMATS,
            )
            self._validators[pointer, direction] = found
        return found

    def error(
        self, pointer: str, value: object, direction: Direction = "reading"
    ) -> str | None:
        """Why ``value`` does not fit the schema at ``pointer`` (an answer's when
        ``direction`` is ``reading``, a request's when ``writing``), where first if not
        at the top (``data/0/name: 3 is not of type 'string'``); None if it fits.

        Raises :class:`service_api_spec.SpecError` for a ``$ref`` of the schema that
        points nowhere. A ``pattern`` that Python's ``re`` cannot read (an ECMA-262
        one such as ``\\p{L}``) is not checked.
        """
        try:
            found = next(
                iter(self.validator(pointer, direction).iter_errors(value)), None
            )
        except Unresolvable as exc:
            raise self.document.error(
                pointer, f"a $ref points nowhere: {exc}"
            ) from None
        except re.error:
            return None  # a pattern Python cannot read (\p{L}...) is left unchecked
        if found is None:
            return None
        where = "/".join(str(step) for step in found.absolute_path)
        return f"{where}: {found.message[:200]}" if where else found.message[:200]

    def build(
        self,
        pointer: str,
        rng: random.Random,
        name: str = "value",
        direction: Direction = "reading",
    ) -> Any:
        """A value for the schema at ``pointer`` as ``direction`` sees it, drawn from
        ``rng`` (the same draws give the same value); ``name`` starts the strings it
        makes up. None if no value can be built (:meth:`unbuildable` says why).

        A value that does not fit is built again with the next draws, a few times;
        :meth:`error` says what the last one lacks.
        """
        root = self.json_schema(pointer, direction)
        value = None
        for _ in range(_ATTEMPTS):
            try:
                value = ValueBuilder(root, rng, self._fits).value(root, name, 0)
            except (Unbuildable, RecursionError):
                return None
            if self.error(pointer, value, direction) is None:
                break
        return value

    def answerable(
        self, pointer: str, record: Mapping[str, Any], rng: random.Random
    ) -> dict[str, Any]:
        """``record``, as a client sent it, made an answer of the schema at ``pointer``:
        without the properties answers never carry (``writeOnly``), with the required
        ones it lacks (``readOnly`` ids, dates...) built from ``rng``.

        Example::

            schemas.answerable(pointer, {"name": "n", "password": "p"}, rng)
        """
        node = self.document.at(pointer)[0]
        hidden = self.model.hidden(node, "reading") if isinstance(node, Mapping) else ()
        answer = {k: v for k, v in record.items() if k not in hidden}
        missing = [
            name
            for name in self.model.view(pointer).required
            if name not in answer and name not in hidden
        ]
        built: Any = None
        if missing:
            built = self.build(pointer, rng)
            if isinstance(built, dict):
                answer.update({name: built[name] for name in missing if name in built})
        # A request's schema may allow what the answer's does not (another enum, a
        # wider type): each top-level property whose value the answer's schema refuses
        # is built for it instead, or left out when the answer need not carry it.
        required = set(self.model.view(pointer).required)
        for _ in range(_ATTEMPTS):
            wrong = self._wrong_properties(pointer, answer)
            if not wrong:
                break
            if built is None:
                built = self.build(pointer, rng)
            for name in wrong:
                if isinstance(built, dict) and name in built:
                    answer[name] = built[name]
                elif name not in required:
                    answer.pop(name, None)
        return answer

    def _wrong_properties(self, pointer: str, answer: Mapping[str, Any]) -> set[str]:
        """The top-level properties of ``answer`` the reading schema at ``pointer``
        refuses: those an error lies under, and those it does not allow at all."""
        wrong: set[str] = set()
        try:
            errors = list(self.validator(pointer).iter_errors(answer))
        except (Unresolvable, re.error):
            return wrong
        for found in errors:
            path = list(found.absolute_path)
            if path and path[0] in answer:
                wrong.add(str(path[0]))
            elif found.validator in ("additionalProperties", "unevaluatedProperties"):
                wrong.update(k for k in answer if repr(k) in found.message)
        return wrong

    def unbuildable(self, pointer: str, direction: Direction = "reading") -> str | None:
        """Why no value of the schema at ``pointer`` can be built; None if one can."""
        root = self.json_schema(pointer, direction)
        rng = random.Random(0)  # noqa: S311 -- sample data, not crypto
        try:
            ValueBuilder(root, rng, self._fits).value(root, "value", 0)
        except Unbuildable as exc:
            return str(exc)
        except RecursionError:
            return "a schema nested too deep to build"
        return None
