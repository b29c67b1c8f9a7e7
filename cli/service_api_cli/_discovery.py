"""The list endpoints the command line offers, and their extra parameters.

Nothing here names an endpoint: the library finds them by shape
(:func:`service_api._endpoints.discover_list_endpoints`), so an endpoint added to
``openapi.yaml`` (and regenerated) is offered by the command line with no change here.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from service_api import _endpoints
from service_api_cli._exit_codes import UsageError

__all__ = [
    "PAGING_PARAMETERS",
    "ListEndpoint",
    "discover_list_endpoints",
    "find_endpoint",
    "parse_params",
]

# Parameters the pagination drives itself; offering them as --param would fight it.
PAGING_PARAMETERS = frozenset({"client", "page_number", "page_size"})


@attrs.frozen
class ListEndpoint:
    """A generated list operation: its command-line name, module and extra parameters."""

    name: str
    module: types.ModuleType = attrs.field(repr=False)
    parameters: Mapping[str, inspect.Parameter] = attrs.field(repr=False)

    @property
    def qualified_name(self) -> str:
        """The module's dotted name, for messages."""
        return self.module.__name__


def _parameters(module: types.ModuleType) -> dict[str, inspect.Parameter]:
    signature = inspect.signature(module.sync_detailed, eval_str=True)
    return {
        name: p
        for name, p in signature.parameters.items()
        if name not in PAGING_PARAMETERS
        and p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }


def discover_list_endpoints(package: types.ModuleType | None = None) -> dict[str, ListEndpoint]:
    """Every list endpoint of the generated package (or of ``package``), by name.

    Example::

        >>> sorted(discover_list_endpoints())
        ['devices', 'shipments']
    """
    return {
        name: ListEndpoint(name=name, module=found.module, parameters=_parameters(found.module))
        for name, found in _endpoints.discover_list_endpoints(package).items()
    }


def find_endpoint(name: str, endpoints: Mapping[str, ListEndpoint]) -> ListEndpoint:
    """The endpoint called ``name`` (or by its module name, such as ``list_shipments``).

    Example::

        find_endpoint("shipments", discover_list_endpoints())
    """
    if name in endpoints:
        return endpoints[name]
    for endpoint in endpoints.values():
        if endpoint.qualified_name.rsplit(".", 1)[-1] == name:
            return endpoint
    known = ", ".join(endpoints) or "none"
    raise UsageError(f"unknown endpoint {name!r} (known: {known})")


def _union_members(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _union_members(arg)]
    return [annotation]


def _convert(raw: str, annotation: Any) -> Any:
    # Generated parameters are scalars or Literal "enums", usually ``X | Unset``; try each
    # member of the union in a fixed order so "5" becomes 5 where an int is accepted.
    expected: list[str] = []
    for member in _union_members(annotation):
        if typing.get_origin(member) is typing.Literal:
            choices = typing.get_args(member)
            for choice in choices:
                if str(choice) == raw:
                    return choice
            expected.append("one of " + ", ".join(str(c) for c in choices))
        elif member is bool:
            lowered = raw.lower()
            if lowered in ("true", "1", "yes"):
                return True
            if lowered in ("false", "0", "no"):
                return False
            expected.append("true or false")
        elif member is int or member is float:
            try:
                return member(raw)
            except ValueError:
                expected.append("an integer" if member is int else "a number")
        elif member is str or member is inspect.Parameter.empty or member is Any:
            return raw
    if not expected:
        return raw
    raise ValueError("expected " + " or ".join(expected))


def parse_params(endpoint: ListEndpoint, pairs: Sequence[str]) -> dict[str, Any]:
    """Turn ``NAME=VALUE`` strings into keyword arguments of the endpoint's function.

    Names are checked against the generated function's signature; values are converted
    to the type it declares.

    Example::

        parse_params(find_endpoint("shipments", endpoints), ["status=delivered"])
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise UsageError(f"--param wants NAME=VALUE, got {pair!r}")
        if name in PAGING_PARAMETERS:
            raise UsageError(
                f"--param {name} is driven by the pagination; use --page-size / --start-page"
            )
        parameter = endpoint.parameters.get(name)
        if parameter is None:
            accepted = ", ".join(endpoint.parameters) or "none"
            raise UsageError(
                f"endpoint {endpoint.name!r} has no parameter {name!r} (accepted: {accepted})"
            )
        try:
            out[name] = _convert(raw, parameter.annotation)
        except ValueError as exc:
            raise UsageError(f"--param {name}={raw!r}: {exc}") from None
    return out
