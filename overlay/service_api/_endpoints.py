"""The list endpoints of the generated package, found by shape rather than by name.

Every module under ``service_api_client.api`` whose ``SUCCESS_MODEL`` carries the
pagination envelope (``data``, ``total_records``, ``page_number``, ``page_size``) is a
list endpoint, so an endpoint added to ``openapi.yaml`` (and regenerated) is found with
no change here. The dlt source and the command line both take their endpoints from here.

Each endpoint also says which field identifies its records: the item model's one
top-level ``...Id`` field (``shipmentId``, ``deviceId``), read from the generated model.
"""

from __future__ import annotations

import importlib
import pkgutil
import types
import typing
from dataclasses import dataclass, field
from typing import Any

import attrs

__all__ = ["ENVELOPE_ATTRIBUTES", "ListEndpoint", "discover_list_endpoints"]

ENVELOPE_ATTRIBUTES = ("data", "total_records", "page_number", "page_size")


@dataclass(frozen=True, slots=True)
class ListEndpoint:
    """A generated list operation.

    Attributes:
        name: the URL path without slashes (``/shipments`` -> ``"shipments"``).
        module: the generated module, to pass to :func:`service_api.iter_pages`.
        item_model: the generated model of one record (``Shipment``), if known.
        id_field: the record's identifier as the API spells it (``"shipmentId"``), or
            ``None`` when the model has no single ``...Id`` field.

    Example::

        endpoint = discover_list_endpoints()["shipments"]
        endpoint.id_field   # "shipmentId"
    """

    name: str
    module: types.ModuleType = field(repr=False)
    item_model: type[Any] | None = field(repr=False)
    id_field: str | None


def _is_envelope(model: object) -> bool:
    if not isinstance(model, type) or not attrs.has(model):
        return False
    names = {f.name for f in attrs.fields(model)}
    return all(attr in names for attr in ENVELOPE_ATTRIBUTES)


def _endpoint_name(module: types.ModuleType) -> str:
    # The URL path is what users see in the API docs: /shipments -> "shipments". When the
    # path needs arguments, fall back to the module name without its verb.
    get_kwargs = getattr(module, "_get_kwargs", None)
    if callable(get_kwargs):
        try:
            url = get_kwargs()["url"]
        except (TypeError, KeyError):
            url = None
        if isinstance(url, str) and url.strip("/") and "{" not in url:
            return url.strip("/").replace("/", "-")
    short = module.__name__.rsplit(".", 1)[-1]
    return short.removeprefix("list_").replace("_", "-")


def _item_model(envelope: type[Any]) -> type[Any] | None:
    # ``data: list[Shipment]`` in the generated envelope; the annotation is a string
    # (``from __future__ import annotations``), resolved in the model's module.
    try:
        hints = typing.get_type_hints(envelope)
    except (NameError, TypeError):
        return None
    for member in _union_members(hints.get("data")):
        if typing.get_origin(member) is list:
            (item,) = typing.get_args(member) or (None,)
            if isinstance(item, type) and attrs.has(item):
                return item
    return None


def _union_members(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _union_members(arg)]
    return [annotation]


def _id_field(item: type[Any] | None) -> str | None:
    if item is None:
        return None
    candidates = [f.name for f in attrs.fields(item) if f.name.endswith("_id") and f.init]
    if len(candidates) != 1:
        return None
    # The API's spelling comes from the generated ``to_dict``: set the attribute to a
    # marker and see under which key it comes out (shipment_id -> "shipmentId").
    marker = object()
    try:
        record = item(**{candidates[0]: marker}).to_dict()
    except (TypeError, ValueError, AttributeError):
        return None
    keys = [key for key, value in record.items() if value is marker]
    return keys[0] if len(keys) == 1 else None


def discover_list_endpoints(package: types.ModuleType | None = None) -> dict[str, ListEndpoint]:
    """Every list endpoint of the generated package (or of ``package``), by name, sorted.

    Example::

        >>> sorted(discover_list_endpoints())
        ['devices', 'shipments']
    """
    if package is None:
        package = importlib.import_module("service_api_client.api")
    found: dict[str, ListEndpoint] = {}
    for info in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."):
        if info.ispkg:
            continue
        module = importlib.import_module(info.name)
        envelope = getattr(module, "SUCCESS_MODEL", None)
        if not _is_envelope(envelope) or not callable(getattr(module, "sync_detailed", None)):
            continue
        assert isinstance(envelope, type)
        item = _item_model(envelope)
        name = _endpoint_name(module)
        found[name] = ListEndpoint(name, module, item, _id_field(item))
    return dict(sorted(found.items()))
