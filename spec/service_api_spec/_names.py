"""Names: the Python names the generator gives the spec's names, and the English ones.

``python_identifier`` follows openapi-python-client's own rule (``PythonIdentifier``:
split on capitals and delimiters, lower case, a trailing ``_`` for a reserved word, a
prefix where the result is no identifier), so that the model names the modules the
generator writes; tests/spec holds the two to the same answers.
"""

from __future__ import annotations

import builtins
import keyword
import re

__all__ = ["python_identifier", "singular", "snake_case"]

_DELIMITERS = r"\. _-"
# The generator's reserved words: the builtins and a few of its own, but ``id``.
_RESERVED = (set(dir(builtins)) | {"self", "true", "false", "datetime"}) - {"id"}


def _sanitize(value: str) -> str:
    return "".join(
        c for c in value if c.isidentifier() or c.isdecimal() or c in _DELIMITERS
    )


def _words(value: str) -> list[str]:
    kept = _sanitize(value)
    if any(c.isupper() for c in kept):
        kept = " ".join(re.split("([A-Z]?[a-z]+)", kept))
    return re.findall(rf"[^{re.escape(_DELIMITERS)}]+", kept)


def snake_case(value: str) -> str:
    """``value`` in snake case, as the generator writes it.

    Example::

        snake_case("listShipmentEvents")  # "list_shipment_events"
    """
    return "_".join(_words(value)).lower()


def python_identifier(value: str, prefix: str = "field_") -> str:
    """The identifier the generator makes of ``value``: its module names (with the
    default prefix) and its keyword arguments.

    Example::

        python_identifier("getShipment")  # "get_shipment"
        python_identifier("from")         # "from_"
    """
    kept = "".join(
        c for c in value if c.isidentifier() or c.isdecimal() or c in _DELIMITERS
    )
    name = snake_case(kept)
    if name in _RESERVED or keyword.iskeyword(name):
        name = f"{name}_"
    if not name.isidentifier() or kept.startswith("_"):
        name = f"{prefix}{name}"
    return name


def singular(plural: str) -> str:
    """The singular of an English plural, by its ending.

    Example::

        singular("categories")  # "category"
        singular("addresses")   # "address"
    """
    if plural.endswith("ies"):
        return plural[:-3] + "y"
    if plural.endswith(("sses", "shes", "ches", "xes", "zes")):
        return plural[:-2]
    if plural.endswith("s") and not plural.endswith("ss"):
        return plural[:-1]
    return plural
