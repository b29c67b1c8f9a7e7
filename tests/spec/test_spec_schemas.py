"""The spec's schemas as JSON Schema and as typed views, held on a document of every
construct OpenAPI 3.0 and 3.1 use: composition, recursion, maps, both ways of saying null,
odd enums and odd names, readOnly and writeOnly."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs kept
from spec_copy import GROWTH, merged_spec

from service_api_spec import (
    DIALECT,
    Direction,
    Discriminator,
    Schemas,
    SpecDocument,
    SpecError,
    read_spec,
    steps,
    unescape,
)

ODD_VALUES = [0, -1, 1, True, False, "", "0", "+1", "-", "@", "class", "None", None]
SCHEMAS: dict[str, Any] = {
    "Named": {
        "type": "object",
        "required": ["name"],
        "properties": {"name": {"type": "string"}},
    },
    "Stamped": {
        "type": "object",
        "required": ["created"],
        "properties": {"created": {"type": "string", "format": "date-time"}},
    },
    # An allOf chain: Pet is Stamped and Named, and Dog is a Pet with more.
    "Pet": {
        "allOf": [
            {"$ref": "#/components/schemas/Named"},
            {"$ref": "#/components/schemas/Stamped"},
        ],
        "type": "object",
        "required": ["petType"],
        "properties": {"petType": {"type": "string"}},
        "discriminator": {"propertyName": "petType"},
    },
    "Dog": {
        "allOf": [
            {"$ref": "#/components/schemas/Pet"},
            {"type": "object", "properties": {"bark": {"type": "boolean"}}},
        ]
    },
    "Cat": {
        "allOf": [
            {"$ref": "#/components/schemas/Pet"},
            {"properties": {"lives": {"type": "integer", "minimum": 0}}},
        ]
    },
    # Scalar parts: a string narrowed by a format and a pattern.
    "Code": {"allOf": [{"type": "string"}, {"format": "uuid"}, {"maxLength": 36}]},
    "AnyPet": {
        "oneOf": [
            {"$ref": "#/components/schemas/Dog"},
            {"$ref": "#/components/schemas/Cat"},
        ],
        "discriminator": {
            "propertyName": "petType",
            "mapping": {"dog": "#/components/schemas/Dog", "kitty": "Cat"},
        },
    },
    "Either": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
    # Recursion through a property, an array, a map and an anyOf.
    "Node": {
        "type": "object",
        "required": ["value"],
        "properties": {
            "value": {"type": "integer"},
            "parent": {"$ref": "#/components/schemas/Node"},
            "children": {
                "type": "array",
                "items": {"$ref": "#/components/schemas/Node"},
            },
            "byName": {
                "type": "object",
                "additionalProperties": {"$ref": "#/components/schemas/Node"},
            },
            "next": {
                "anyOf": [{"$ref": "#/components/schemas/Node"}, {"type": "null"}]
            },
        },
    },
    "Counts": {"type": "object", "additionalProperties": {"type": "integer"}},
    "Labelled": {
        "type": "object",
        "properties": {"label": {"type": "string"}},
        "additionalProperties": {"type": "string"},
    },
    "Closed": {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": False,
    },
    # Null in the 3.0 way, in a 3.1 document too, and on a reference.
    "Old": {
        "type": "object",
        "properties": {
            "word": {"type": "string", "nullable": True},
            "size": {"type": "integer", "nullable": True, "enum": [1, 2]},
            "pet": {
                "allOf": [{"$ref": "#/components/schemas/Named"}],
                "nullable": True,
            },
            "ref": {"$ref": "#/components/schemas/Named", "nullable": True},
            "gt": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
            "lt": {"type": "number", "maximum": 10, "exclusiveMaximum": True},
            "le": {"type": "number", "maximum": 10, "exclusiveMaximum": False},
        },
    },
    "New": {"type": ["string", "null"]},
    "Odd": {"enum": ODD_VALUES},
    "Names": {
        "type": "object",
        "required": ["+1", "$ref"],
        "properties": {
            "+1": {"type": "integer"},
            "-1": {"type": "integer"},
            "@odata.type": {"type": "string"},
            "$ref": {"type": "string"},
            "a/b~c": {"type": "string"},
            "class": {"type": "string"},
        },
    },
    "Account": {
        "type": "object",
        "required": ["id", "password", "login"],
        "properties": {
            "id": {"type": "string", "readOnly": True},
            "password": {"type": "string", "writeOnly": True},
            "login": {"type": "string"},
        },
        "additionalProperties": False,
    },
    # The writeOnly field declared in one part, required in another.
    "Secret": {
        "allOf": [
            {"$ref": "#/components/schemas/Login"},
            {
                "type": "object",
                "properties": {"pin": {"type": "string", "writeOnly": True}},
            },
        ]
    },
    "Login": {
        "type": "object",
        "required": ["user", "pin"],
        "properties": {"user": {"type": "string"}},
    },
    "Grid": {
        "type": "array",
        "items": {"type": "array", "items": {"type": "number"}},
    },
    "Deep": {
        "type": "object",
        "properties": {
            "a": {
                "type": "object",
                "required": ["b"],
                "properties": {
                    "b": {
                        "type": "object",
                        "properties": {
                            "c": {
                                "type": "object",
                                "properties": {"d": {"type": "string"}},
                            }
                        },
                    }
                },
            }
        },
    },
}


@pytest.fixture(scope="module")
def schemas() -> Schemas:
    document = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {},
        "components": {"schemas": SCHEMAS},
    }
    return read_spec(SpecDocument(document)).schemas


def valid(
    schemas: Schemas, name: str, value: Any, direction: Direction = "reading"
) -> bool:
    schema = schemas.json_schema(f"#/components/schemas/{name}", direction)
    Draft202012Validator.check_schema(schema)
    return bool(Draft202012Validator(schema).is_valid(value))


def test_every_schema_is_a_valid_self_contained_2020_12_schema(
    schemas: Schemas,
) -> None:
    for name in SCHEMAS:
        for direction in ("reading", "writing"):
            schema = schemas.json_schema(f"#/components/schemas/{name}", direction)
            assert schema["$schema"] == DIALECT
            Draft202012Validator.check_schema(schema)
            # Self-contained: every reference is to its own $defs.
            text = repr(schema)
            assert "#/components" not in text.replace("'#/components/schemas/", "")


def test_an_all_of_chain_requires_every_part(schemas: Schemas) -> None:
    dog = {"name": "Rex", "created": "2024-01-01T00:00:00Z", "petType": "dog"}
    assert valid(schemas, "Dog", {**dog, "bark": True})
    assert not valid(schemas, "Dog", {k: v for k, v in dog.items() if k != "name"})
    assert not valid(schemas, "Dog", {**dog, "bark": "loud"})
    view = schemas.view("#/components/schemas/Dog")
    # The deepest parts' first, as a record lists them.
    assert list(view.properties) == ["name", "created", "petType", "bark"]
    assert set(view.required) == {"name", "created", "petType"}
    assert view.types == ("object",)
    assert view.properties["created"].format == "date-time"


def test_scalar_parts_merge_into_one_scalar(schemas: Schemas) -> None:
    code = schemas.view("#/components/schemas/Code")
    assert code.types == ("string",)
    assert code.format == "uuid"
    assert code.constraints == {"maxLength": 36}
    assert code.properties == {}
    assert valid(schemas, "Code", "x")
    assert not valid(schemas, "Code", "x" * 37)
    assert not valid(schemas, "Code", {})


def test_one_of_with_a_discriminator_and_its_mapping(schemas: Schemas) -> None:
    pet = schemas.view("#/components/schemas/AnyPet")
    assert pet.variant_keyword == "oneOf"
    assert [v.pointer for v in pet.variants] == [
        "#/components/schemas/Dog",
        "#/components/schemas/Cat",
    ]
    assert pet.discriminator == Discriminator(
        "petType",
        {"dog": "#/components/schemas/Dog", "kitty": "#/components/schemas/Cat"},
    )
    schema = schemas.json_schema("#/components/schemas/AnyPet", "reading")
    assert schema["discriminator"]["propertyName"] == "petType"
    # A dog that barks is a Dog, not a Cat (lives is not an integer).
    dog = {"name": "a", "created": "x", "petType": "dog", "lives": "many"}
    assert valid(schemas, "AnyPet", dog)
    # Both variants match a bare pet: oneOf refuses it.
    assert not valid(schemas, "AnyPet", {"name": "a", "created": "x", "petType": "p"})
    # The base's discriminator has no mapping: the names of the variants are none.
    base = schemas.view("#/components/schemas/Pet").discriminator
    assert base == Discriminator("petType", {})


def test_any_of_without_a_discriminator_and_a_null_variant(schemas: Schemas) -> None:
    either = schemas.view("#/components/schemas/Either")
    assert either.variant_keyword == "anyOf"
    assert [v.types for v in either.variants] == [("string",), ("integer",)]
    assert either.nullable
    assert either.discriminator is None
    for value in ("a", 1, None):
        assert valid(schemas, "Either", value)
    assert not valid(schemas, "Either", 1.5)


def test_recursion_through_properties_arrays_maps_and_any_of(schemas: Schemas) -> None:
    leaf = {"value": 1}
    tree = {
        "value": 0,
        "parent": leaf,
        "children": [leaf, {"value": 2, "children": [leaf]}],
        "byName": {"x": leaf},
        "next": {"value": 3, "next": None},
    }
    assert valid(schemas, "Node", tree)
    assert not valid(schemas, "Node", {**tree, "children": [{"value": "no"}]})
    assert not valid(schemas, "Node", {**tree, "byName": {"x": {}}})
    assert not valid(schemas, "Node", {**tree, "next": {"next": None}})
    node = schemas.view("#/components/schemas/Node")
    # One view for one place: a walk comes back to the same object.
    assert node.properties["parent"] is node
    assert node.properties["children"].items is node
    additional = node.properties["byName"].additional
    assert additional is node
    next_ = node.properties["next"]
    assert next_.nullable
    assert next_.variants == (node,)


def test_maps_with_and_without_properties(schemas: Schemas) -> None:
    counts = schemas.view("#/components/schemas/Counts")
    assert counts.properties == {}
    assert not isinstance(counts.additional, bool)
    assert counts.additional.types == ("integer",)
    assert valid(schemas, "Counts", {"a": 1, "b": 2})
    assert not valid(schemas, "Counts", {"a": "1"})
    labelled = schemas.view("#/components/schemas/Labelled")
    assert set(labelled.properties) == {"label"}
    assert not isinstance(labelled.additional, bool)
    assert schemas.view("#/components/schemas/Closed").additional is False
    assert schemas.view("#/components/schemas/Named").additional is True
    assert not valid(schemas, "Closed", {"a": "x", "b": "y"})


def test_null_in_the_3_0_way_inside_a_3_1_document(schemas: Schemas) -> None:
    old = schemas.view("#/components/schemas/Old").properties
    for name in ("word", "size", "pet", "ref"):
        assert old[name].nullable, name
        record = {name: None}
        assert valid(schemas, "Old", record), name
    assert old["word"].types == ("string",)
    assert old["ref"].properties.keys() == {"name"}
    assert old["size"].enum == (1, 2)
    assert not valid(schemas, "Old", {"size": 3})
    assert not valid(schemas, "Old", {"pet": {}})
    assert valid(schemas, "Old", {"pet": {"name": "a"}, "ref": {"name": "b"}})
    new = schemas.view("#/components/schemas/New")
    assert new.nullable
    assert new.types == ("string",)
    assert not schemas.view("#/components/schemas/Named").nullable


def test_boolean_exclusive_bounds_become_numbers(schemas: Schemas) -> None:
    old = schemas.view("#/components/schemas/Old").properties
    assert old["gt"].constraints == {"exclusiveMinimum": 0}
    assert old["lt"].constraints == {"exclusiveMaximum": 10}
    assert old["le"].constraints == {"maximum": 10}
    assert not valid(schemas, "Old", {"gt": 0})
    assert valid(schemas, "Old", {"gt": 0.5, "lt": 9.5, "le": 10})
    assert not valid(schemas, "Old", {"lt": 10})


def test_enums_of_any_json_values(schemas: Schemas) -> None:
    odd = schemas.view("#/components/schemas/Odd")
    assert odd.enum == tuple(ODD_VALUES)
    assert odd.nullable
    for value in ODD_VALUES:
        assert valid(schemas, "Odd", value), value
    assert not valid(schemas, "Odd", "other")


def test_property_names_that_are_not_identifiers(schemas: Schemas) -> None:
    names = schemas.view("#/components/schemas/Names")
    assert list(names.properties) == [
        "+1",
        "-1",
        "@odata.type",
        "$ref",
        "a/b~c",
        "class",
    ]
    assert names.properties["a/b~c"].types == ("string",)
    assert names.required == ("+1", "$ref")
    assert valid(schemas, "Names", {"+1": 1, "$ref": "x", "a/b~c": "y"})
    assert not valid(schemas, "Names", {"+1": 1})
    assert not valid(schemas, "Names", {"+1": 1, "$ref": 2})


def test_read_only_and_write_only_by_direction(schemas: Schemas) -> None:
    account = schemas.view("#/components/schemas/Account")
    assert account.properties["id"].read_only
    assert account.properties["password"].write_only
    assert set(account.visible("reading")) == {"id", "login"}
    assert set(account.visible("writing")) == {"password", "login"}
    reading = schemas.json_schema("#/components/schemas/Account", "reading")
    assert set(reading["properties"]) == {"id", "login"}
    assert reading["required"] == ["id", "login"]
    assert valid(schemas, "Account", {"id": "1", "login": "a"}, "reading")
    # additionalProperties: false forbids an answer that gives the password away.
    assert not valid(schemas, "Account", {"id": "1", "login": "a", "password": "p"})
    assert valid(schemas, "Account", {"password": "p", "login": "a"}, "writing")
    assert not valid(schemas, "Account", {"id": "1", "login": "a"}, "writing")


def test_a_hidden_property_leaves_a_sibling_parts_required(schemas: Schemas) -> None:
    assert valid(schemas, "Secret", {"user": "a"}, "reading")
    assert not valid(schemas, "Secret", {"user": "a"}, "writing")
    assert valid(schemas, "Secret", {"user": "a", "pin": "1"}, "writing")
    # Login alone still requires its pin (it does not know it is writeOnly).
    assert not valid(schemas, "Login", {"user": "a"}, "reading")


def test_arrays_of_arrays_and_deep_inline_objects(schemas: Schemas) -> None:
    grid = schemas.view("#/components/schemas/Grid")
    assert grid.types == ("array",)
    assert grid.items is not None
    assert grid.items.items is not None
    assert grid.items.items.types == ("number",)
    assert valid(schemas, "Grid", [[1, 2.5], []])
    assert not valid(schemas, "Grid", [1])
    deep = schemas.view("#/components/schemas/Deep")
    d = deep.properties["a"].properties["b"].properties["c"].properties["d"]
    assert d.types == ("string",)
    assert d.pointer.endswith("/properties/c/properties/d")
    assert valid(schemas, "Deep", {"a": {"b": {"c": {"d": "x"}}}})
    assert not valid(schemas, "Deep", {"a": {}})
    assert not valid(schemas, "Deep", {"a": {"b": {"c": {"d": 1}}}})


def test_a_reference_that_points_nowhere_is_a_spec_error(schemas: Schemas) -> None:
    with pytest.raises(SpecError, match="points nowhere"):
        schemas.json_schema("#/components/schemas/Missing", "reading")


def test_json_pointers_are_unescaped_in_one_place() -> None:
    assert unescape("a~1b~0c") == "a/b~c"
    assert unescape("~01") == "~1"
    assert steps("#/paths/~1things~1{id}/get") == ["paths", "/things/{id}", "get"]
    assert steps("#") == []


def test_a_3_0_document_reads_the_same() -> None:
    document = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {},
        "components": {"schemas": SCHEMAS},
    }
    old = read_spec(SpecDocument(document)).schemas
    schema = old.json_schema("#/components/schemas/Old", "reading")
    assert schema["properties"]["word"]["type"] == ["string", "null"]
    assert schema["properties"]["gt"] == {"type": "number", "exclusiveMinimum": 0}
    node = old.view("#/components/schemas/Node")
    assert node.properties["children"].items is node


def test_every_answer_and_body_of_the_grown_spec_is_a_valid_schema() -> None:
    spec = read_spec(SpecDocument(merged_spec(GROWTH)))
    checked = 0
    for op in spec.operations:
        places: list[tuple[str | None, Direction]] = [
            (answer.pointer, "reading") for answer in op.answers.values()
        ]
        if op.body is not None:
            places.append((op.body.pointer, "writing"))
        for pointer, direction in places:
            if pointer is not None:
                schema = spec.schemas.json_schema(pointer, direction)
                Draft202012Validator.check_schema(schema)
                checked += 1
    assert checked > len(spec.operations)  # answers and bodies were found
