"""Values built from schemas fit them: every construct OpenAPI 3.0 and 3.1 documents use,
for any seed, in both directions."""

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

import service_api_spec
from service_api_mock._schemas import Schemas
from service_api_spec import SpecDocument

_ODD_ENUM = [0, -1, True, False, "", "0", "12", "+", "@", None, "class", "None", "def"]
SCHEMAS: dict[str, Any] = {
    "Base": {
        "type": "object",
        "required": ["id", "kind"],
        "properties": {
            "id": {"type": "integer", "format": "int64", "readOnly": True},
            "kind": {"type": "string"},
            "secret": {"type": "string", "writeOnly": True},
        },
    },
    "Chain": {
        "allOf": [
            {"$ref": "#/components/schemas/Base"},
            {"type": "object", "required": ["extra"], "properties": {"extra": {}}},
            {"properties": {"more": {"allOf": [{"type": "string"}, {"minLength": 3}]}}},
        ]
    },
    "ScalarAllOf": {"allOf": [{"type": "string"}, {"maxLength": 5}, {"minLength": 2}]},
    "IntAllOf": {"allOf": [{"type": "integer"}, {"minimum": 10}, {"maximum": 12}]},
    "Cat": {
        "type": "object",
        "required": ["petType", "meows"],
        "properties": {"petType": {"type": "string"}, "meows": {"type": "boolean"}},
    },
    "Dog": {
        "type": "object",
        "required": ["petType", "barks"],
        "properties": {"petType": {"type": "string"}, "barks": {"type": "boolean"}},
    },
    "Pet": {
        "oneOf": [
            {"$ref": "#/components/schemas/Cat"},
            {"$ref": "#/components/schemas/Dog"},
        ],
        "discriminator": {
            "propertyName": "petType",
            "mapping": {"cat": "#/components/schemas/Cat", "dog": "Dog"},
        },
    },
    "PetNoMapping": {
        "oneOf": [
            {"$ref": "#/components/schemas/Cat"},
            {"$ref": "#/components/schemas/Dog"},
        ],
        "discriminator": {"propertyName": "petType"},
    },
    "AnyPlain": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "integer"}]},
    "OneOfScalars": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    "Tree": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "children": {
                "type": "array",
                "items": {"$ref": "#/components/schemas/Tree"},
            },
            "parent": {"$ref": "#/components/schemas/Tree"},
            "byName": {
                "type": "object",
                "additionalProperties": {"$ref": "#/components/schemas/Tree"},
            },
        },
    },
    "Linked": {
        "type": "object",
        "required": ["next"],
        "properties": {
            "next": {
                "anyOf": [{"$ref": "#/components/schemas/Linked"}, {"type": "null"}]
            }
        },
    },
    "Map": {"type": "object", "additionalProperties": {"type": "integer"}},
    "MapWithProps": {
        "type": "object",
        "required": ["a"],
        "properties": {"a": {"type": "string"}},
        "additionalProperties": {"type": "number"},
        "minProperties": 3,
    },
    "Closed": {
        "type": "object",
        "required": ["+1", "-1", "@odata.type", "$ref", "class"],
        "properties": {
            "+1": {"type": "integer"},
            "-1": {"type": "integer"},
            "@odata.type": {"type": "string", "const": "#Thing"},
            "$ref": {"type": "string"},
            "class": {"type": "string"},
        },
        "additionalProperties": False,
    },
    "Nullable30": {"type": "string", "nullable": True, "enum": ["a", "b"]},
    "NullableRef": {"allOf": [{"$ref": "#/components/schemas/Cat"}], "nullable": True},
    "Nullable31": {"type": ["integer", "null"], "minimum": 5},
    "OnlyNull": {"type": "null"},
    "OddEnum": {"enum": _ODD_ENUM},
    "OddEnums": {"type": "array", "items": {"enum": _ODD_ENUM}, "minItems": 3},
    "Grid": {
        "type": "array",
        "items": {"type": "array", "items": {"type": "number"}, "minItems": 2},
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
                                "required": ["d"],
                                "properties": {
                                    "d": {"type": "array", "items": {"type": "object"}}
                                },
                            }
                        },
                    }
                },
            }
        },
    },
    "Patterns": {
        "type": "object",
        "required": ["code", "phone", "sid", "slug"],
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{4}$"},
            "phone": {"type": "string", "pattern": "^\\+?[1-9]\\d{1,14}$"},
            "sid": {
                "type": "string",
                "pattern": "^AC[0-9a-fA-F]{32}$",
                "minLength": 34,
            },
            "slug": {"type": "string", "pattern": "[a-z]+", "maxLength": 8},
        },
    },
    "Formats": {
        "type": "object",
        "properties": {
            name: {"type": "string", "format": name}
            for name in (
                "date-time",
                "date",
                "time",
                "email",
                "uri",
                "uuid",
                "ipv4",
                "ipv6",
                "hostname",
                "byte",
                "duration",
                "int64",
            )
        },
    },
    "Numbers": {
        "type": "object",
        "required": ["big", "small", "excl30", "excl31", "step", "price", "only"],
        "properties": {
            "big": {"type": "integer", "format": "int64", "minimum": 9007199254740993},
            "small": {"type": "integer", "format": "int32", "maximum": -2147483000},
            "excl30": {
                "type": "integer",
                "minimum": 0,
                "exclusiveMinimum": True,
                "maximum": 2,
                "exclusiveMaximum": True,
            },
            "excl31": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "step": {"type": "integer", "multipleOf": 7, "minimum": 8, "maximum": 20},
            "price": {"type": "number", "multipleOf": 0.01, "minimum": 0.5},
            "only": {"const": 42},
        },
    },
    "Sizes": {
        "type": "object",
        "required": ["few", "long", "short", "unique"],
        "properties": {
            "few": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 4,
                "maxItems": 4,
            },
            "long": {"type": "string", "minLength": 40},
            "short": {"type": "string", "maxLength": 1},
            "unique": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0, "maximum": 9},
                "uniqueItems": True,
                "minItems": 5,
            },
        },
    },
    "Tuple": {
        "type": "array",
        "prefixItems": [{"type": "string"}, {"type": "integer"}],
    },
    "Anything": {},
}
NAMES = sorted(SCHEMAS)


def _schemas(version: str) -> Schemas:
    document = {
        "openapi": version,
        "info": {"title": "t", "version": "1"},
        "paths": {},
        "components": {"schemas": SCHEMAS},
    }
    return Schemas(service_api_spec.Schemas(SpecDocument(document)))


DOCUMENTS = {version: _schemas(version) for version in ("3.0.3", "3.1.0")}


@pytest.mark.parametrize("version", sorted(DOCUMENTS))
@pytest.mark.parametrize("direction", ["reading", "writing"])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(NAMES))
def test_every_built_value_fits_its_schema(
    version: str, direction: Any, seed: int, name: str
) -> None:
    schemas = DOCUMENTS[version]
    pointer = f"#/components/schemas/{name}"
    value = schemas.build(pointer, random.Random(seed), name, direction)
    assert schemas.error(pointer, value, direction) is None, value
    # The same draws give the same value.
    assert schemas.build(pointer, random.Random(seed), name, direction) == value


@pytest.mark.parametrize("name", NAMES)
def test_every_schema_builds_a_fitting_value_for_the_first_seeds(name: str) -> None:
    schemas = DOCUMENTS["3.1.0"]
    pointer = f"#/components/schemas/{name}"
    for seed in range(20):
        value = schemas.build(pointer, random.Random(seed), name)
        assert schemas.error(pointer, value) is None, (seed, value)


def test_read_only_is_answered_and_write_only_never() -> None:
    schemas = DOCUMENTS["3.0.3"]
    pointer = "#/components/schemas/Base"
    answered = schemas.build(pointer, random.Random(0))
    assert "id" in answered
    assert "secret" not in answered
    # A request need not carry the readOnly id, and may carry the secret.
    assert schemas.error(pointer, {"kind": "k", "secret": "s"}, "writing") is None
    assert schemas.error(pointer, {"kind": "k"}) is not None


def test_the_discriminator_names_the_branch_built() -> None:
    schemas = DOCUMENTS["3.1.0"]
    kinds = {"Pet": {"cat", "dog"}, "PetNoMapping": {"Cat", "Dog"}}
    for name, expected in kinds.items():
        seen = set()
        for seed in range(30):
            pet = schemas.build(f"#/components/schemas/{name}", random.Random(seed))
            seen.add(pet["petType"])
            assert ("meows" in pet) == (pet["petType"].lower() == "cat"), pet
        assert seen == expected


def test_nullable_in_both_dialects_and_3_0_bounds() -> None:
    for version, schemas in DOCUMENTS.items():
        for name in ("Nullable30", "NullableRef", "Nullable31", "OnlyNull"):
            assert schemas.error(f"#/components/schemas/{name}", None) is None, version
        numbers = "#/components/schemas/Numbers"
        view = schemas.json_schema(numbers)
        Draft202012Validator.check_schema(view)
        built = schemas.build(numbers, random.Random(1))
        assert built["excl30"] == 1
        assert built["big"] >= 9007199254740993
        assert schemas.error(numbers, {**built, "excl30": 0}) is not None


def test_recursion_ends_and_maps_have_entries() -> None:
    schemas = DOCUMENTS["3.1.0"]
    for seed in range(10):
        tree = schemas.build("#/components/schemas/Tree", random.Random(seed))
        assert "name" in tree
        linked = schemas.build("#/components/schemas/Linked", random.Random(seed))
        assert "next" in linked
    built = schemas.build("#/components/schemas/Map", random.Random(0))
    assert built
    assert all(isinstance(v, int) for v in built.values())
    assert (
        len(schemas.build("#/components/schemas/MapWithProps", random.Random(0))) >= 3
    )


def test_what_cannot_be_built_says_why() -> None:
    document = {
        "openapi": "3.1.0",
        "components": {
            "schemas": {
                "Never": {
                    "type": "object",
                    "required": ["self"],
                    "properties": {"self": {"$ref": "#/components/schemas/Never"}},
                },
                "Nothing": {"allOf": [{"type": "string"}, {"type": "integer"}]},
            }
        },
    }
    schemas = Schemas(service_api_spec.Schemas(SpecDocument(document)))
    for name in ("Never", "Nothing"):
        assert schemas.unbuildable(f"#/components/schemas/{name}") is not None


# ---- drawn schemas: any combination of the constructs builds values that fit ----------

_NAMES = st.sampled_from(["id", "+1", "-1", "@odata.type", "$ref", "class", "a b", ""])
_LEAVES = st.one_of(
    st.builds(
        lambda low, extra, pattern: {
            "type": "string",
            "minLength": low,
            "maxLength": low + extra,
            **({"pattern": pattern} if pattern else {}),
        },
        st.integers(0, 5),
        st.integers(8, 30),
        st.sampled_from([None, "^[a-z]+$", "[0-9]{3}", "^(AC|SM)[0-9a-f]{4}$"]),
    ),
    st.sampled_from(
        [
            {"type": "string", "format": name}
            for name in ("date-time", "date", "email", "uuid", "uri", "ipv4", "byte")
        ]
    ),
    st.builds(
        lambda low, span, step, fmt: {
            "type": "integer",
            "minimum": low,
            "maximum": low + span * step,
            "multipleOf": step,
            **({"format": fmt} if fmt else {}),
        },
        st.integers(-(2**40), 2**40),
        st.integers(1, 50),
        st.integers(1, 9),
        st.sampled_from([None, "int64"]),
    ),
    st.builds(
        lambda low, high: {"type": "number", "exclusiveMinimum": low, "maximum": high},
        st.integers(-100, 0),
        st.integers(1, 100),
    ),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.builds(
        lambda members: {"enum": members},
        st.lists(st.sampled_from(_ODD_ENUM), min_size=1, max_size=4, unique=True),
    ),
    st.builds(lambda v: {"const": v}, st.sampled_from(_ODD_ENUM)),
)


def _objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.builds(
        lambda props, required, closed: {
            "type": "object",
            "properties": props,
            "required": [n for n in props if n in required],
            **({"additionalProperties": False} if closed else {}),
        },
        st.dictionaries(_NAMES, children, max_size=4),
        st.sets(_NAMES),
        st.booleans(),
    )


def _composed(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    distinct = [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]
    return st.one_of(
        _objects(children),
        st.builds(
            lambda items, low: {"type": "array", "items": items, "minItems": low},
            children,
            st.integers(0, 2),
        ),
        st.builds(
            lambda values: {"type": "object", "additionalProperties": values},
            children,
        ),
        # allOf of objects with properties apart, as inheritance writes them.
        st.builds(
            lambda a, b: {
                "allOf": [
                    {"type": "object", "properties": {"a": a}, "required": ["a"]},
                    {"type": "object", "properties": {"b": b}},
                ]
            },
            children,
            children,
        ),
        st.builds(
            lambda parts: {"anyOf": parts}, st.lists(children, min_size=1, max_size=3)
        ),
        st.builds(
            lambda picked: {"oneOf": picked},
            st.lists(st.sampled_from(distinct), min_size=1, max_size=3, unique_by=str),
        ),
        st.builds(lambda inner: {**inner, "nullable": True}, children),
    )


DRAWN = st.recursive(_LEAVES, _composed, max_leaves=12)


@settings(max_examples=100, deadline=None)
@given(
    schema=DRAWN,
    seed=st.integers(0, 2**16),
    version=st.sampled_from(["3.0.3", "3.1.0"]),
)
def test_a_drawn_schema_builds_values_that_fit(
    schema: Any, seed: int, version: str
) -> None:
    document = {
        "openapi": version,
        "components": {
            "schemas": {
                "Drawn": schema,
                "Loop": {
                    "type": "object",
                    "properties": {
                        "drawn": schema,
                        "again": {"$ref": "#/components/schemas/Loop"},
                    },
                },
            }
        },
    }
    schemas = Schemas(service_api_spec.Schemas(SpecDocument(document)))
    for name in ("Drawn", "Loop"):
        pointer = f"#/components/schemas/{name}"
        value = schemas.build(pointer, random.Random(seed), name)
        assert schemas.error(pointer, value) is None, (schema, value)
