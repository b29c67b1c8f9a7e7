"""The one reading of ``openapi.yaml``: a typed model every other part reads.

The generator's templates (through codegen/generate.py), the mock, the command line's
registry, the spec check and the tests all take their facts from :func:`load_spec`,
so that they agree. The rules, in order:

- **token**: a ``POST`` without a bearer token whose form has ``client_id`` and
  ``client_secret``; it gets no door (the client makes that call itself).
- A path ending in a parameter (``/things/{thingId}``) is an *item* of the collection
  before it (``/things``). A collection with a paged list or an item path, or whose last
  word is a plural noun posted to (``/payments``, not ``/things/{thingId}/cancel``), is a
  **resource**; one whose path holds parameters (``/things/{thingId}/parts``) is a
  sub-resource of the resource whose item path it lies under (its ``parent``; its
  ``parent_fields`` name the field of a parent's record that gives each path parameter).
- **list**: a ``GET`` of a collection taking ``pageNumber`` and ``pageSize`` and answering
  the page envelope (``totalRecords``, ``pageNumber``, ``pageSize``, ``data``: an array of
  objects). Its ``page_size``: the ``pageSize`` parameter's ``default`` and ``maximum``;
  without a maximum there, the page's (its ``pageSize`` field's ``maximum``, else its
  ``data``'s ``maxItems``); without a default, the maximum.
- **create**: every ``POST`` on a resource's collection (its header parameters are its
  door's arguments); **get**, **replace**, **update**, **delete**: ``GET`` (answering an
  object), ``PUT`` and ``PATCH`` (of JSON), ``DELETE`` of an item.
- **other**: every other operation (a plain array, an action such as
  ``POST /things/{thingId}/cancel``, ...). It still gets a door and a route.

A resource's record is described by its list's items, else its get's answer, else its
create's answer, else its create's or replace's body. Its identifier is the item path's
parameter where the record has that field (or one of its name but for case: ``Sid`` for
``sid``), or ``id`` for an item parameter named for the resource (``petId`` of
``/pets/{petId}``); else its one ``id`` or ``...Id`` field (its parents' left out); else,
among several, the one named for the resource (``routeId`` of ``/routes``), else ``id``;
else none. A record that is a union (``oneOf``/``anyOf``) is identified by the field
these rules find in every variant under one name, else by none; its fields are its
variants'.

A list's query parameter is a **filter** of a field when the parameter carries
``x-filter: {field: F, compare: eq|gt|ge|lt|le}``, or is named as the field (equal), or
is ``minX`` / ``maxX`` (the field ``x`` at least / at most the value), ``xAfter`` /
``xBefore`` (the field ``x``, ``xAt``, ``xDate`` or ``xTime`` later / earlier than the
value), ``X>`` / ``X<`` (the field ``X`` at least / at most the value); else, for a
parameter of a format (``date-time``, ``date``, ``uuid``), the only field of that type
and format, compared as the words of its name say (``after``: later; ``since``,
``from``: at least; ``before``: earlier; ``until``: at most; else equal). Any other is
listed in ``Operation.unapplied``.

One answer lookup (``Operation.answer(status)``: its own, its range's, ``default``), one
route matcher (``Spec.route(method, path)``, literal paths first), one place for the
packaged spec (:func:`packaged_spec`).

Doors (the client's attribute of a tag is the generator's to choose, as it knows the
client): ``client.<tag>.list()`` for the tag's own ``list_<tag>``, ``list_<name>`` for other
lists; ``client.<tag>.<verb>()`` for ``<verb>_<thing>`` under the tag ``<things>`` (get,
create, update, replace, delete); the operation's snake-case name otherwise. Two
operations on one door: the later takes its own name.

Schemas: ``spec.schemas.json_schema(pointer, "reading" | "writing")`` is any schema of the
spec as one self-contained JSON Schema 2020-12 (3.0's ``nullable`` and boolean bounds
rewritten, ``writeOnly`` properties out of an answer, ``readOnly`` ones out of a request
body), for ``jsonschema.Draft202012Validator``; ``spec.schemas.view(pointer)`` the same
schema resolved (``allOf`` merged, variants, discriminator, nullability) for code that
walks it. JSON pointers are unescaped by :func:`unescape` (:func:`steps`) only.

Example::

    spec = load_spec("openapi.yaml")
    for op in spec.operations:
        print(op.operation_id, op.kind, op.door)
"""

from __future__ import annotations

from pathlib import Path

from ._document import (
    SpecDocument,
    SpecError,
    escape,
    packaged_spec,
    read_document,
    steps,
    unescape,
)
from ._model import (
    Answer,
    Body,
    Compare,
    Filter,
    Kind,
    Location,
    Operation,
    PageSize,
    Parameter,
    ParameterKind,
    Resource,
    Route,
    Shape,
    Spec,
    Tag,
)
from ._names import python_identifier, singular, snake_case
from ._reading import (
    PAGE_PARAMETERS,
    is_json,
    read_spec,
)
from ._schemas import DIALECT, Direction, Discriminator, Schemas, SchemaView

__all__ = [
    "DIALECT",
    "PAGE_PARAMETERS",
    "Answer",
    "Body",
    "Compare",
    "Direction",
    "Discriminator",
    "Filter",
    "Kind",
    "Location",
    "Operation",
    "PageSize",
    "Parameter",
    "ParameterKind",
    "Resource",
    "Route",
    "SchemaView",
    "Schemas",
    "Shape",
    "Spec",
    "SpecDocument",
    "SpecError",
    "Tag",
    "escape",
    "is_json",
    "load_spec",
    "packaged_spec",
    "python_identifier",
    "read_document",
    "read_spec",
    "singular",
    "snake_case",
    "steps",
    "unescape",
]


def load_spec(path: str | Path) -> Spec:
    """The model of the spec at ``path``.

    Raises :class:`SpecError`, naming the file and line, for a file that is not YAML or
    not an OpenAPI document, or a ``$ref`` that points nowhere.

    Example::

        load_spec("openapi.yaml").operation("getShipment").door  # "get"
    """
    return read_spec(read_document(Path(path)))
