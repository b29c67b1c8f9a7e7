"""What the project's templates render, computed once from the spec model and the
generator's own parse: the templates only loop over these facts.

The spec model (:mod:`service_api_spec`) says what each operation is (its kind, its door
under ``client.<tag>``, its resource and identifier); openapi-python-client's parse says
what it became in Python (its module, its parameters' names and types, its answers'
models). Each generated endpoint is matched with its operation by name (the endpoint's
``name`` is the model's ``python_name``).

Example::

    facts = Facts.read(load_spec("openapi.yaml"), project.openapi)
    facts.doors["get_shipment"].name  # "get"
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
from openapi_python_client.parser.openapi import Endpoint, GeneratorData
from openapi_python_client.parser.properties import ModelProperty
from openapi_python_client.parser.responses import Response
from openapi_python_client.strings import (
    ClassName,
    PythonIdentifier,
    safe_for_docstring,
)

from service_api_spec import (
    PAGE_PARAMETERS,
    Kind,
    Location,
    Operation,
    ParameterKind,
    SchemaView,
    Spec,
    SpecError,
    Tag,
)

__all__ = [
    "CLIENT_ATTRIBUTES",
    "Door",
    "Facts",
    "GenerationError",
    "ListEntry",
    "ListParameter",
    "Page",
    "RecordField",
    "RecordModel",
    "TagDoors",
    "client_attribute",
]


class GenerationError(RuntimeError):
    """The generator cannot carry a part of the spec: its message names it."""


# The options of every list door (service_api's PageOptions): a parameter of the same
# Python name cannot be passed on through the pager, and is left out of the door.
PAGER_OPTIONS = frozenset(
    ["page_size", "start_page", "max_items", "max_pages", "concurrency", "key"]
)
# The attributes of the generated client and of service_api.Client: a tag of one of
# these names would hide it, so its operations are under ``client.<name>_api``.
CLIENT_ATTRIBUTES = frozenset(
    [
        "aio",
        "auth_header_name",
        "get_async_httpx_client",
        "get_httpx_client",
        "prefix",
        "raise_on_unexpected_status",
        "set_async_httpx_client",
        "set_httpx_client",
        "token",
        "with_cookies",
        "with_headers",
        "with_timeout",
        "account_id",
        "aclose",
        "close",
        "retry_policy",
        "with_account",
        "with_options",
    ]
)
# Methods of every model (the package's records.Record): a field of one of these names
# gets a ``_`` after its attribute's name, as the generator does for Python's own names
# (``from_``).
MODEL_METHODS = frozenset(
    ["get", "keys", "to_dict", "from_dict", "to_multipart", "additional_properties"]
)
# The kind (records.py) of each of the generator's simple properties, by its template.
# The field tables name them through the module (``_records.STRING``): a model may be
# named as any of them.
_KINDS = {
    "int_property.py.jinja": "_records.INTEGER",
    "float_property.py.jinja": "_records.NUMBER",
    "boolean_property.py.jinja": "_records.BOOLEAN",
    "datetime_property.py.jinja": "_records.DATE_TIME",
    "date_property.py.jinja": "_records.DATE",
    "uuid_property.py.jinja": "_records.UUID",
}
_KINDS_BY_CLASS = {"StringProperty": "_records.STRING", "NoneProperty": "_records.NULL"}
# ``list[...]`` in a class that has a method ``list`` is that method (at run time and
# for mypy): the resource classes write ``builtins.list[...]``.
_LIST = re.compile(r"(?<![\w.])list\[")


@attrs.frozen
class Page:
    """What a list door pages through: the page model, the item model (or, for items
    that are a oneOf/anyOf of models, the union of them: ``item_module`` is then None),
    and the item's attribute that identifies it (None: none is known)."""

    page_class: str
    page_module: str
    item_class: str
    item_module: str | None
    id_attribute: str | None
    item_models: tuple[tuple[str, str], ...] = ()
    """Each model an item may be, as (module, class): the item model alone, or each
    variant of a union."""
    page_size: int | None = None
    """Records per page when none is named: the spec's default, else its maximum."""
    max_page_size: int | None = None
    """The most records per page the spec says the service serves (None: unsaid)."""

    @property
    def sizes(self) -> str:
        """The page sizes as a docstring says them: ``"1 to 50, default 50"``."""
        bound = f"1 to {self.max_page_size}" if self.max_page_size else "1 or more"
        default = f"default {self.page_size}" if self.page_size else "no default"
        return f"{bound}, {default}"

    item: Any = attrs.field(default=None, repr=False, eq=False)
    """The generator's property of one item."""


@attrs.frozen
class Door:
    """One operation's method under ``client.<tag>`` (and ``client.aio.<tag>``).

    ``arguments`` are its keyword-only parameters as declared (``shipment_id: str``),
    ``passed`` their names, passed on to the module's ``_get_kwargs``; ``returns`` the
    type of what a success reads: the union of the models of every 2xx answer the
    operation declares (``None`` for one without a body: a 200 with a record or a 202
    with none is ``Record | None``); ``success`` the statuses of a success, as Python
    (``range(200, 201)``, ``(200, 201)``); ``page`` what a list door pages through (None
    for any other door, which sends one request).
    """

    name: str
    kind: Kind
    module: str
    tag: str
    endpoint: Endpoint = attrs.field(repr=False)
    answer: Response | None = attrs.field(repr=False)
    """The generator's answer of the first success (None: none is declared)."""
    answers: tuple[Response, ...] = attrs.field(repr=False)
    """The generator's answers of every success."""
    success: str
    status: str
    returns: str
    returns_text: str
    """``returns`` as a docstring says it (``list[Route]``, not ``builtins.list[Route]``)."""
    arguments: tuple[str, ...]
    passed: tuple[str, ...]
    parameters: tuple[Any, ...] = attrs.field(repr=False)
    """The generator's parameters of the door, for their docstrings."""
    example: str
    """The arguments of an example call: ``shipment_id="..."``."""
    summary: str
    """The operation's summary, as a docstring may hold it (else its module's name)."""
    page: Page | None = None
    answer_headers: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """The headers each answer of the operation declares, by status key (``"200"``,
    ``"4XX"``), lower case: the client tells any other it meets as drift."""

    def usage(self, awaited: bool) -> str:
        """An example of a call, for a docstring.

        Example::

            door.usage(awaited=True)  # 'result = await client.aio.shipments.get(...)'
        """
        where = f"client.{'aio.' if awaited else ''}{self.tag}.{self.name}"
        if self.page is not None:
            options = ", ".join(filter(None, [self.example, "max_items=10"]))
            loop = "async for" if awaited else "for"
            return f"{loop} item in {where}({options}):\n    print(item)"
        result = "" if self.returns == "None" else "result = "
        return f"{result}{'await ' if awaited else ''}{where}({self.example})"


@attrs.frozen
class TagDoors:
    """The doors of one tag: ``client.<attribute>``, the classes ``<Tag>Resource`` and
    ``Async<Tag>Resource`` in ``api/<module>/__init__.py``, and what they import."""

    attribute: str
    module: str
    doors: tuple[Door, ...]
    imports: tuple[str, ...]

    @property
    def resource_class(self) -> str:
        """The class behind ``client.<attribute>``: ``ShipmentsResource``."""
        return str(ClassName(f"{self.module}_resource", "field_"))

    @property
    def async_class(self) -> str:
        """The class behind ``client.aio.<attribute>``: ``AsyncShipmentsResource``."""
        return str(ClassName(f"async_{self.module}_resource", "field_"))


@attrs.frozen
class ListParameter:
    """A parameter of a list endpoint but the page ones (``ListParameter`` of the
    generated registry)."""

    name: str
    python_name: str
    location: Location
    required: bool
    kind: ParameterKind
    choices: tuple[Any, ...]


@attrs.frozen
class ListEntry:
    """One entry of ``api.LIST_ENDPOINTS``: the list of a resource."""

    name: str
    tag_module: str
    door: Door
    id_field: str | None
    parameters: tuple[ListParameter, ...]
    page_size: int | None
    max_page_size: int | None
    parent: str | None
    parent_fields: Mapping[str, str]


@attrs.frozen
class RecordField:
    """One declared field of a model, as its class declares it and its field table
    lists it (``records.Field``).

    ``attribute`` is the generator's Python name, with a ``_`` after it for a name of a
    model's method (``keys_``); ``declaration`` the class body's line; ``docstring`` its
    line of the class docstring; ``table`` the ``Field(...)`` of the field table."""

    name: str
    attribute: str
    required: bool
    declaration: str
    docstring: str
    table: str


@attrs.frozen
class RecordModel:
    """What a model's module says beyond the generator's parse: its fields (in the
    spec's order), the type of ``additional_properties``, and the keywords of its field
    table's ``_declare`` call beyond the fields."""

    fields: tuple[RecordField, ...]
    extra_type: str
    declare: str


@attrs.frozen
class Facts:
    """Every fact the templates need, by what they loop over.

    ``doors``: by endpoint module; ``tags``: by tag module (only tags with a door);
    ``lists``: the registry's entries, sorted by name; ``records``: by model class, its
    fields and field table; ``notes``: what could not be given a door, and why.
    """

    doors: Mapping[str, Door]
    tags: Mapping[str, TagDoors]
    lists: tuple[ListEntry, ...]
    records: Mapping[str, RecordModel]
    notes: tuple[str, ...]
    tag_attributes: Mapping[str, str] = attrs.field(factory=dict)
    """The client's attribute of each tag of the spec with a door, by the tag's name."""

    @classmethod
    def read(cls, spec: Spec, openapi: GeneratorData) -> Facts:
        """The facts of ``spec`` as ``openapi`` (the generator's parse) generates it;
        the parse is read, never changed."""
        reader = _Reader(spec, openapi)
        tags = {}
        for module, collection in openapi.endpoint_collections_by_tag.items():
            doors = tuple(reader.doors(collection.endpoints))
            if doors:
                tags[str(module)] = TagDoors(
                    attribute=doors[0].tag,
                    module=str(module),
                    doors=doors,
                    imports=_imports(doors),
                )
        found = {door.module: door for tag in tags.values() for door in tag.doors}
        missing = [
            op for op in spec.operations if op.door and op.python_name not in found
        ]
        notes = [f"{op.operation_id}: not generated, so no door" for op in missing]
        with_doors = {op.tag for op in spec.operations if op.python_name in found}
        return cls(
            doors=found,
            tags=tags,
            lists=tuple(sorted(reader.entries, key=lambda entry: entry.name)),
            records=_records(
                openapi,
                {d.page.page_class for d in found.values() if d.page},
                reader.views,
            ),
            notes=tuple([*reader.notes, *notes]),
            tag_attributes={
                name: client_attribute(tag)
                for name, tag in sorted(spec.tags.items())
                if name in with_doors
            },
        )


class _Reader:
    """Matches the generator's endpoints with the model's operations."""

    def __init__(self, spec: Spec, openapi: GeneratorData) -> None:
        self.spec = spec
        self.operations = {op.python_name: op for op in spec.operations}
        self.models = {str(m.class_info.name): m for m in openapi.models}
        self.entries: list[ListEntry] = []
        self.notes: list[str] = []
        self.views = _component_views(spec, openapi)
        """The spec's schema of each model, where known, by class (a union's
        discriminator is read from it)."""

    def doors(self, endpoints: Iterable[Endpoint]) -> Iterable[Door]:
        taken: set[str] = set()
        for endpoint in endpoints:
            operation = self.operations.get(str(endpoint.name))
            if operation is None or operation.door is None:
                continue
            # Two tags of one Python name (``Things`` and ``things``) share one class.
            name = operation.door
            if name in taken:
                name = str(endpoint.name)
            taken.add(name)
            yield self.door(name, operation, endpoint)

    def door(self, name: str, operation: Operation, endpoint: Endpoint) -> Door:
        answers = _successes(operation, endpoint)
        response = answers[0] if answers else None
        page = self.page(operation, response) if operation.kind == "list" else None
        parameters = list(endpoint.path_parameters)
        arguments = [_code(p.to_string()) for p in parameters]
        if endpoint.bodies:
            parameters.append(endpoint.bodies[0].prop)
            arguments.append(_body(endpoint))
        for location, parameter in endpoint.iter_all_parameters():
            where = str(location.value)
            if where == "path" or (page and _is_page_parameter(parameter, where)):
                continue
            if page is not None and parameter.python_name in PAGER_OPTIONS:
                # A pager option's name: the parameter's gets a ``_`` (``page_size_``).
                renamed = PythonIdentifier(
                    f"{parameter.python_name}_", prefix="", skip_snake_case=True
                )
                object.__setattr__(parameter, "python_name", renamed)
            parameters.append(parameter)
            arguments.append(_code(parameter.to_string()))
        types = [
            "None"
            if r.source["attribute"] == "None"
            else _code(r.prop.get_type_string())
            for r in answers
        ]
        # None last, once: ``Record | None``.
        kinds = [*dict.fromkeys(t for t in types if t != "None")]
        returns = " | ".join(kinds + (["None"] if "None" in types or not kinds else []))
        door = Door(
            name=name,
            kind=operation.kind,
            module=str(endpoint.name),
            tag=client_attribute(self.spec.tags[operation.tag]),
            endpoint=endpoint,
            answer=response,
            answers=tuple(answers),
            success=_statuses(answers),
            status=" or ".join(r.status_code.pattern for r in answers) or "2XX",
            returns=_outside_class(returns),
            returns_text=returns,
            arguments=tuple(_outside_class(a) for a in arguments),
            passed=tuple(str(p.python_name) for p in parameters),
            parameters=tuple(parameters),
            example=_example(parameters),
            summary=safe_for_docstring(_raw(endpoint.summary) or str(endpoint.name)),
            page=page,
            answer_headers=tuple(
                (key, tuple(sorted(h.lower() for h in answer.headers)))
                for key, answer in operation.answers.items()
            ),
        )
        if page is not None and operation.resource is not None:
            self.entries.append(self.entry(operation, door))
        return door

    def page(self, operation: Operation, response: Response | None) -> Page | None:
        """What the list pages through, from the generator's page and item models;
        None (and a note) where it did not make them classes."""
        page = self.models.get(_class_name(response.prop)) if response else None
        data = next(
            (p for p in _properties(page) if _raw(p.name) == "data"),
            None,
        )
        inner = getattr(data, "inner_property", None)
        item = self.models.get(_class_name(inner))
        # Items that are a oneOf/anyOf of models: the pager's items are their union.
        variants = [
            self.models.get(_class_name(p))
            for p in getattr(inner, "inner_properties", None) or []
        ]
        if page is None or (item is None and not variants):
            raise GenerationError(
                f"{operation.operation_id}: the page of its answer or the items of its "
                "`data` are no object schema the generator could make a model of"
            )
        if item is None and None in variants:
            raise GenerationError(
                f"{operation.operation_id}: the items of its `data` are a oneOf/anyOf "
                "whose branches are not all object schemas"
            )
        if operation.success is not None and operation.success.pointer:
            pointer = operation.success.pointer
            self.views.setdefault(
                str(page.class_info.name), self.spec.schemas.view(pointer)
            )
        resource = self.spec.resources[str(operation.resource)]
        models = [item] if item is not None else variants
        ids = {
            _attribute(p)
            for model in models
            for p in _properties(model)
            if _raw(p.name) == resource.id_field
        }
        # The id attribute only where every kind of item has it, under one name.
        id_attribute = ids.pop() if len(ids) == 1 else None
        sizes = operation.page_size
        return Page(
            page_class=str(page.class_info.name),
            page_module=str(page.class_info.module_name),
            item_class=(
                str(item.class_info.name)
                if item is not None
                else " | ".join(str(m.class_info.name) for m in variants if m)
            ),
            item_module=None if item is None else str(item.class_info.module_name),
            id_attribute=id_attribute,
            item_models=tuple(
                (str(m.class_info.module_name), str(m.class_info.name))
                for m in models
                if m is not None
            ),
            item=inner,
            page_size=sizes.default if sizes else None,
            max_page_size=sizes.maximum if sizes else None,
        )

    def entry(self, operation: Operation, door: Door) -> ListEntry:
        generated = {
            (_raw(p.name), str(location.value)): str(p.python_name)
            for location, p in door.endpoint.iter_all_parameters()
        }
        parameters = tuple(
            ListParameter(
                name=p.name,
                python_name=generated.get((p.name, p.location), p.name),
                location=p.location,
                required=p.required,
                kind=p.kind,
                choices=p.choices,
            )
            for p in operation.parameters
            if not (p.location == "query" and p.name in PAGE_PARAMETERS)
        )
        resource = self.spec.resources[str(operation.resource)]
        sizes = operation.page_size
        # A parent is named only where it is listed: its records give the ids.
        listed = any(op.resource == resource.parent for op in self.spec.lists)
        return ListEntry(
            name=resource.name,
            tag_module=str(door.endpoint.tags[0]),
            door=door,
            id_field=resource.id_field,
            parameters=parameters,
            page_size=sizes.default if sizes else None,
            max_page_size=sizes.maximum if sizes else None,
            parent=resource.parent if listed else None,
            parent_fields=dict(resource.parent_fields) if listed else {},
        )


def client_attribute(tag: Tag) -> str:
    """The client's attribute for ``tag``: its module's name, ``_api`` after it where
    that would hide an attribute of the client (``token`` -> ``token_api``).

    Example::

        client_attribute(spec.tags["shipments"])  # "shipments"
    """
    return f"{tag.module}_api" if tag.module in CLIENT_ATTRIBUTES else tag.module


def _successes(operation: Operation, endpoint: Endpoint) -> list[Response]:
    """The generator's answers of every success the operation declares, the model's
    success first: each 2xx answer (none: it declares none)."""
    if operation.success is None:
        return []
    first = operation.success.status
    found = [
        r
        for r in endpoint.responses.patterns
        if r.status_code.range is not None and 200 <= r.status_code.range[0] < 300
    ]
    return sorted(found, key=lambda r: r.status_code.pattern != first)


def _statuses(answers: Iterable[Response]) -> str:
    """The statuses of a success, as the Python a door passes to ``_answer``."""
    ranges = sorted(r.status_code.range for r in answers if r.status_code.range)
    if not ranges:
        return "range(200, 300)"
    if len(ranges) == 1:
        low, high = ranges[0]
        return f"range({low}, {high + 1})"
    if all(low == high for low, high in ranges):
        return "(" + ", ".join(str(low) for low, _ in ranges) + ")"
    parts = ", ".join(f"*range({low}, {high + 1})" for low, high in ranges)
    return f"({parts})"


def _body(endpoint: Endpoint) -> str:
    """The ``body`` argument: its model, or the union of its media types' models."""
    if len(endpoint.bodies) == 1:
        return _code(endpoint.bodies[0].prop.to_string())
    types = [_code(b.prop.get_type_string(no_optional=True)) for b in endpoint.bodies]
    if all(b.prop.required for b in endpoint.bodies):
        return f"body: {' | '.join(types)}"
    return f"body: {' | '.join(types)} | Unset = UNSET"


def _example(parameters: Iterable[Any]) -> str:
    """The required arguments of an example call, a placeholder each."""
    shown = []
    for parameter in parameters:
        if not parameter.required:
            continue
        value = "..."
        if type(parameter).__name__ == "StringProperty":
            value = '"..."'
        elif getattr(parameter, "class_info", None) is not None:
            value = f"{parameter.class_info.name}(...)"
        shown.append(f"{parameter.python_name}={value}")
    return ", ".join(shown)


def _imports(doors: Iterable[Door]) -> tuple[str, ...]:
    """What the module of a tag's resource classes imports."""
    lines = {"from ...doors import Resource"}
    for door in doors:
        lines.add(f"from . import {door.module}")
        if "builtins." in " ".join([door.returns, *door.arguments]):
            lines.add("import builtins")
        properties = list(door.parameters)
        if door.page is not None:
            lines.add("from collections.abc import Callable, Hashable")
            lines.add("from ...doors import ListPager")
            lines.add(
                f"from ...models.{door.page.page_module} import {door.page.page_class}"
            )
            if door.page.item_module is not None:
                module, name = door.page.item_module, door.page.item_class
                lines.add(f"from ...models.{module} import {name}")
            else:
                properties.append(door.page.item)
        else:
            properties += [
                a.prop for a in door.answers if a.source["attribute"] != "None"
            ]
        for prop in properties:
            lines.update(prop.get_imports(prefix="..."))
            lines.update(prop.get_lazy_imports(prefix="..."))
    # The doors cast nothing; their modules' own imports say so if they need it.
    lines.discard("from typing import cast")
    return tuple(sorted(lines))


def _attribute(prop: Any) -> str:
    """The attribute of a model's field: the generator's Python name, with a ``_``
    after a name of a model's method (its JSON name is unchanged: ``record["keys"]``)."""
    name = str(prop.python_name)
    return f"{name}_" if name in MODEL_METHODS else name


def _kind(prop: Any, view: SchemaView | None = None) -> str:
    """The kind of ``prop`` as the field table writes it (records.py): ``STRING``,
    ``list_of(model(ShipmentLeg))``, ``union(NULL, DATE_TIME)``...; ``view``: its
    schema in the spec, where known (a union's discriminator)."""
    template = prop.template
    if template in _KINDS:
        return _KINDS[template]
    if type(prop).__name__ in _KINDS_BY_CLASS:
        return _KINDS_BY_CLASS[type(prop).__name__]
    if template == "literal_enum_property.py.jinja":
        values = sorted(prop.values, key=repr)
        return f"_records.enum({', '.join(repr(v) for v in values)})"
    if type(prop).__name__ == "ConstProperty":
        return f"_records.enum({prop.value.raw_value!r})"
    if template == "model_property.py.jinja":
        return f"_records.model({prop.class_info.name})"
    if template == "list_property.py.jinja":
        items = view.items if view is not None else None
        return f"_records.list_of({_kind(prop.inner_property, items)})"
    if template == "union_property.py.jinja":
        arms = ", ".join(_kind(arm) for arm in prop.inner_properties)
        return f"_records.union({arms}{_discriminated(prop, view)})"
    # Any value (a file, any other kind): kept as sent, never refused.
    return "_records.ANY"


def _discriminated(prop: Any, view: SchemaView | None) -> str:
    """The arguments of ``records.union`` that name the arm of each value of the
    discriminator its schema states (``, on='type', mapping={'file': 0}``); ``""``
    where it states none, or its variants are not the generator's arms one for one
    (the union then reads an object as the record it fits best)."""
    told = view.discriminator if view is not None else None
    if view is None or told is None:
        return ""
    variants = [v.pointer for v in view.variants]
    arms = [
        i
        for i, arm in enumerate(prop.inner_properties)
        if type(arm).__name__ != "NoneProperty"
    ]
    if len(arms) != len(variants):
        return ""
    mapping = {
        value: arms[variants.index(pointer)]
        for value, pointer in told.mapping.items()
        if pointer in variants
    }
    return f", on={told.property!r}, mapping={mapping!r}" if mapping else ""


def _component_views(spec: Spec, openapi: GeneratorData) -> dict[str, SchemaView]:
    """The spec's schema of each model the generator made of a component schema, by
    class (its one reference among its roots; an inline model's roots name only the
    classes it is inside of)."""
    views = {}
    for model in openapi.models:
        classes = [r for r in model.roots if isinstance(r, ClassName)]
        refs = [_raw(r) for r in model.roots if not isinstance(r, ClassName)]
        if len(classes) == 1 and len(refs) == 1:
            pointer = refs[0] if refs[0].startswith("#") else f"#{refs[0]}"
            try:
                views[str(model.class_info.name)] = spec.schemas.view(pointer)
            except SpecError:  # a name the generator was given otherwise
                continue
    return views


def _nested_views(
    openapi: GeneratorData, views: Mapping[str, SchemaView]
) -> dict[str, SchemaView]:
    """``views`` and the schema of each inline model found through them (a field's
    object, or an array's items)."""
    found = dict(views)
    todo = [m for m in openapi.models if str(m.class_info.name) in found]
    models = {str(m.class_info.name): m for m in openapi.models}
    while todo:
        model = todo.pop()
        view = found[str(model.class_info.name)]
        for prop in _properties(model):
            inner: Any = view.properties.get(_raw(prop.name))
            while prop.template == "list_property.py.jinja" and inner is not None:
                prop, inner = prop.inner_property, inner.items
            name = _class_name(prop)
            if inner is not None and name in models and name not in found:
                found[name] = inner
                todo.append(models[name])
    return found


def _records(
    openapi: GeneratorData,
    pages: set[str],
    views: Mapping[str, SchemaView] | None = None,
) -> dict[str, RecordModel]:
    """Each model's fields and field table; ``pages``: the page envelopes' classes,
    whose required fields the pager needs (``strict``); ``views``: the spec's schema of
    the models, by class, where known."""
    found = {}
    secrets = _secret_fields(openapi)
    views = _nested_views(openapi, views or {})
    for model in openapi.models:
        name = str(model.class_info.name)
        fields = []
        view = views.get(name)
        for prop in _properties(model):
            json_name = _raw(prop.name)
            attribute = _attribute(prop)
            declared = _code(prop.to_string())
            docstring = str(prop.to_docstring())
            if attribute != prop.python_name:  # the generator's name, renamed
                declared = attribute + declared[len(prop.python_name) :]
                docstring = attribute + docstring[len(prop.python_name) :]
            flags = ", required=True" if prop.required else ""
            if json_name in secrets.get(name, ()):
                flags += ", secret=True"
            fields.append(
                RecordField(
                    name=json_name,
                    attribute=attribute,
                    required=bool(prop.required),
                    declaration=declared,
                    docstring=docstring,
                    table=(
                        f"_records.Field({json_name!r}, {attribute!r}, "
                        f"{_kind(prop, view.properties.get(json_name) if view else None)}"
                        f"{flags})"
                    ),
                )
            )
        extra = model.additional_properties
        declare, extra_type = [], "Any"
        if extra and type(extra).__name__ != "AnyProperty":
            declare.append(f"extra={_kind(extra)}")
            declare.append("undeclared_drift=False")  # a map: its keys are its data
            extra_type = _code(extra.get_type_string())
        if name in pages:
            declare.append("strict=True")
        found[name] = RecordModel(
            fields=tuple(fields),
            extra_type=extra_type,
            declare=", ".join(declare),
        )
    return found


def _secret_fields(openapi: GeneratorData) -> dict[str, tuple[str, ...]]:
    """By model class, the JSON names of its fields whose schema says
    ``format: password`` (never in a record's repr)."""
    found = {}
    for model in openapi.models:
        schemas = (model.data.properties or {}).items()
        names = tuple(
            _raw(name)
            for name, schema in schemas
            if _raw(getattr(schema, "schema_format", None)) == "password"
        )
        if names:
            found[str(model.class_info.name)] = names
    return found


def _properties(model: ModelProperty | None) -> list[Any]:
    if model is None:
        return []
    return [*(model.required_properties or []), *(model.optional_properties or [])]


def _is_page_parameter(parameter: Any, location: str) -> bool:
    return location == "query" and _raw(parameter.name) in PAGE_PARAMETERS


def _class_name(prop: Any) -> str:
    info = getattr(prop, "class_info", None)
    return str(info.name) if info is not None else ""


def _raw(name: Any) -> str:
    """The spec's own spelling of a name the generator keeps as an UntrustedString."""
    return str(
        name.get_untrusted_value() if hasattr(name, "get_untrusted_value") else name
    )


def _code(code: Any) -> str:
    return str(code.as_unembedded_code())


def _outside_class(code: str) -> str:
    """``code`` as it must be written in a class that may have a method ``list``."""
    return _LIST.sub("builtins.list[", code)
