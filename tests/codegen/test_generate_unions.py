"""codegen/generate.py: a list whose items are a ``oneOf`` of records has its entry of
``LIST_ENDPOINTS``, and a union of records is read by the discriminator the spec states
(its ``mapping``, else the variants' schema names), else by the record it fits best.

The shapes are this module's own, added to a copy of the spec (the names are chosen
to be new to it).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from spec_copy import ROOT, generate_copy, load_generated

PAGE = {
    "type": "object",
    "required": ["totalRecords", "pageNumber", "pageSize", "data"],
    "properties": {
        "totalRecords": {"type": "integer"},
        "pageNumber": {"type": "integer"},
        "pageSize": {"type": "integer"},
        "data": {"type": "array", "items": {"$ref": "#/components/schemas/UnionItem"}},
    },
}
SCHEMAS: dict[str, Any] = {
    "UnionItem": {
        "oneOf": [
            {"$ref": "#/components/schemas/UnionNote"},
            {"$ref": "#/components/schemas/UnionLink"},
        ],
        # "note" by the mapping; "UnionLink" by the variant's schema name.
        "discriminator": {
            "propertyName": "kind",
            "mapping": {"note": "#/components/schemas/UnionNote"},
        },
    },
    "UnionNote": {
        "type": "object",
        "required": ["kind"],
        "properties": {
            "kind": {"type": "string"},
            "text": {"type": "string"},
            # A union with no discriminator: the record that fits best.
            "about": {
                "anyOf": [
                    {"$ref": "#/components/schemas/UnionNote"},
                    {"$ref": "#/components/schemas/UnionLink"},
                ]
            },
            # Null first, then records told apart by their schema names.
            "next": {
                "anyOf": [
                    {"type": "null"},
                    {"$ref": "#/components/schemas/UnionNote"},
                    {"$ref": "#/components/schemas/UnionLink"},
                ],
                "discriminator": {"propertyName": "kind"},
            },
        },
    },
    "UnionLink": {
        "type": "object",
        "required": ["kind", "url"],
        "properties": {"kind": {"type": "string"}, "url": {"type": "string"}},
    },
}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text("utf-8"))
    spec.setdefault("tags", []).append({"name": "unionitems"})
    spec["paths"]["/unionitems"] = {
        "get": {
            "operationId": "listUnionItems",
            "tags": ["unionitems"],
            "parameters": [
                {"$ref": "#/components/parameters/pageNumber"},
                {"$ref": "#/components/parameters/pageSize"},
            ],
            "responses": {
                "200": {
                    "description": "One page of items.",
                    "content": {"application/json": {"schema": PAGE}},
                }
            },
        }
    }
    spec["components"]["schemas"].update(SCHEMAS)
    copy = generate_copy(tmp_path_factory.mktemp("unions"), spec)
    return load_generated(copy, "union_items_client")


def test_a_list_of_a_union_of_records_has_its_registry_entry(
    package: ModuleType,
) -> None:
    models = importlib.import_module(f"{package.__name__}.models")
    records = importlib.import_module(f"{package.__name__}.records")
    registry = importlib.import_module(f"{package.__name__}.api").LIST_ENDPOINTS
    entry = registry["unionitems"]
    assert entry.item_models == (models.UnionNote, models.UnionLink)
    assert entry.item_model is records.Record


def test_the_items_are_read_by_their_discriminator(package: ModuleType) -> None:
    models = importlib.import_module(f"{package.__name__}.models")
    drift = importlib.import_module(f"{package.__name__}.drift")
    entry = importlib.import_module(f"{package.__name__}.api").LIST_ENDPOINTS[
        "unionitems"
    ]
    log = drift.DriftLog()
    with log.listening():
        page = entry.page_model.from_dict(
            {
                "totalRecords": 3,
                "pageNumber": 1,
                "pageSize": 3,
                "data": [
                    # A note with a url: UnionLink would read it with no drift.
                    {"kind": "note", "url": "u"},
                    {"kind": "UnionLink", "url": "u"},
                    # No discriminator value known: the record that fits best.
                    {
                        "kind": "other",
                        "text": "t",
                        "about": {"kind": "x", "url": "u"},
                        "next": {"kind": "UnionLink"},
                    },
                ],
            }
        )
    note, link, other = page.data
    assert (type(note), type(link), type(other)) == (
        models.UnionNote,
        models.UnionLink,
        models.UnionNote,
    )
    assert type(other.about) is models.UnionLink
    # Named by the discriminator though UnionNote would fit it with no drift.
    assert type(other.next_) is models.UnionLink
    # The chosen records' drift only (the note's url, the next link's missing url), none
    # of the variants not chosen (UnionLink.text, UnionNote.next...).
    assert {d.place for d in log.findings} == {"UnionNote.url", "UnionLink.url"}


def test_the_generated_field_table_states_the_mapping(package: ModuleType) -> None:
    entry = importlib.import_module(f"{package.__name__}.api").LIST_ENDPOINTS[
        "unionitems"
    ]
    source = Path(str(importlib.import_module(entry.page_model.__module__).__file__))
    table = source.read_text("utf-8").replace("'", '"')
    assert 'on="kind"' in table, table
    assert '"note": 0' in table, table
    assert '"UnionLink": 1' in table, table
    # A null arm first: the records' arms are counted after it.
    note = Path(
        str(importlib.import_module(f"{package.__name__}.models.union_note").__file__)
    )
    assert 'mapping={"UnionNote": 1, "UnionLink": 2}' in note.read_text().replace(
        "'", '"'
    )
