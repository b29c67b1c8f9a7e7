"""codegen/generate.py on a spec that is not valid OpenAPI 3: it stops before writing
anything, naming the file, the line of the failing node and the rule broken; and on
valid specs of unusual shapes: it never stops, and the client imports."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from spec_copy import ROOT, SpecCopy, generate_copy

GENERATE = ROOT / "codegen" / "generate.py"
SEED: dict[str, Any] = yaml.safe_load((ROOT / "openapi.yaml").read_text("utf-8"))


def run(spec: Path, dest: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENERATE), "--spec", str(spec), str(dest)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def line_of(text: str, needle: str, after: str = "") -> int:
    """The number of the first line holding ``needle`` (after the first holding
    ``after``)."""
    lines = text.splitlines()
    start = next(n for n, line in enumerate(lines) if after in line)
    return next(n for n, line in enumerate(lines) if n >= start and needle in line) + 1


def _body_parameter(spec: dict[str, Any]) -> None:
    parameters = spec["paths"]["/shipments"]["get"]["parameters"]
    parameters.append({"name": "x", "in": "body"})


def _unknown_type(spec: dict[str, Any]) -> None:
    spec["components"]["schemas"]["Device"]["properties"]["deviceId"]["type"] = "strin"


def _reference_nowhere(spec: dict[str, Any]) -> None:
    answer = spec["paths"]["/devices"]["get"]["responses"]["200"]
    answer["content"]["application/json"]["schema"] = {
        "$ref": "#/components/schemas/Nowhere"
    }


def _path_parameter_undeclared(spec: dict[str, Any]) -> None:
    spec["paths"]["/shipments/{shipmentId}"]["get"]["parameters"] = []


# (edit, the text of the failing line, the line before it to look after, the rule)
BROKEN: list[tuple[Callable[[dict[str, Any]], None], str, str, str]] = [
    (_body_parameter, "in: body", "/shipments:", "is not one of"),
    (_unknown_type, "type: strin", "Device:", "'strin' is not one of"),
    (_reference_nowhere, "#/components/schemas/Nowhere", "", "points nowhere"),
    (
        _path_parameter_undeclared,
        "get:",
        "/shipments/{shipmentId}:",
        "Path parameter 'shipmentId'",
    ),
]


@pytest.mark.parametrize(
    ("edit", "needle", "after", "rule"),
    BROKEN,
    ids=[edit.__name__.strip("_") for edit, *_ in BROKEN],
)
def test_an_invalid_spec_names_the_file_the_line_and_the_rule(
    tmp_path: Path,
    edit: Callable[[dict[str, Any]], None],
    needle: str,
    after: str,
    rule: str,
) -> None:
    spec = copy.deepcopy(SEED)
    edit(spec)
    path = tmp_path / "openapi.yaml"
    text = yaml.safe_dump(spec, sort_keys=False)
    path.write_text(text, "utf-8")
    (tmp_path / "out" / "service_api_client").mkdir(parents=True)
    (tmp_path / "out" / "service_api_client" / "kept.py").write_text("")
    done = run(path, tmp_path / "out")
    assert done.returncode == 1, done.stdout + done.stderr
    message = done.stderr.strip()
    assert message.startswith("cannot generate the client: "), message
    assert f"{path}:{line_of(text, needle, after)}: " in message, message
    assert rule in message, message
    assert len(message.splitlines()) == 1, message
    # Nothing written: the package there is the one before.
    assert [p.name for p in (tmp_path / "out").rglob("*")] == [
        "service_api_client",
        "kept.py",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("openapi: 3.1.0\npaths:\n  /a: [\n", ":4: not valid YAML"),
        (
            "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n",
            ":1: not an OpenAPI 3",
        ),
        ("- a list\n", "not an OpenAPI document"),
    ],
    ids=["not-yaml", "swagger-2", "not-a-mapping"],
)
def test_a_file_that_is_no_openapi_3_document_says_so(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "openapi.yaml"
    path.write_text(text, "utf-8")
    done = run(path, tmp_path / "out")
    assert done.returncode == 1
    assert expected in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


# Valid, and of no shape the project's spec has: no tags, no operationId, a HEAD, a text
# answer, a "default" answer only, a cookie parameter, an optional body of two media
# types, an array query parameter beside a list door, tags named as client attributes,
# fields named as the models' methods and as Python's own names.
UNUSUAL: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Unusual", "version": "1"},
    "paths": {
        "/ping": {"head": {"responses": {"204": {"description": "up"}}}},
        "/version": {
            "get": {
                "responses": {
                    "200": {
                        "description": "v",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    }
                }
            }
        },
        "/things": {
            "get": {
                "operationId": "listThings",
                "tags": ["things"],
                "parameters": [
                    {
                        "name": "pageNumber",
                        "in": "query",
                        "schema": {"type": "integer"},
                    },
                    {"name": "pageSize", "in": "query", "schema": {"type": "integer"}},
                    {
                        "name": "ids",
                        "in": "query",
                        "schema": {"type": "array", "items": {"type": "string"}},
                    },
                    {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": {
                        "description": "a page",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/ThingPage"}
                            }
                        },
                    }
                },
            },
            "post": {
                "operationId": "importThings",
                "tags": ["things"],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/Thing"}
                        },
                        "multipart/form-data": {
                            "schema": {"$ref": "#/components/schemas/Thing"}
                        },
                    }
                },
                "responses": {
                    "default": {
                        "description": "what came of it",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "array",
                                    "items": {"$ref": "#/components/schemas/Thing"},
                                }
                            }
                        },
                    }
                },
            },
        },
        # A plain array beside the tag's list door: list[...] in a class with a list().
        "/things/{thingId}/labels": {
            "get": {
                "operationId": "listThingLabels",
                "tags": ["things"],
                "parameters": [
                    {
                        "name": "thingId",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {
                    "200": {
                        "description": "its labels",
                        "content": {
                            "application/json": {
                                "schema": {"type": "array", "items": {"type": "string"}}
                            }
                        },
                    }
                },
            }
        },
        "/tokens/{tokenId}": {
            "get": {
                "operationId": "getToken",
                "tags": ["token"],
                "parameters": [
                    {
                        "name": "tokenId",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer"},
                    }
                ],
                "responses": {
                    "200": {
                        "description": "t",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/Thing"}
                            }
                        },
                    }
                },
            }
        },
    },
    "components": {
        "schemas": {
            "Thing": {
                "type": "object",
                "properties": {
                    "thingId": {"type": "string"},
                    "keys": {"type": "string"},
                    "get": {"type": "integer"},
                    "from": {"type": "string"},
                    "list": {"type": "array", "items": {"type": "string"}},
                },
            },
            "ThingPage": {
                "type": "object",
                "required": ["totalRecords", "pageNumber", "pageSize", "data"],
                "properties": {
                    "totalRecords": {"type": "integer"},
                    "pageNumber": {"type": "integer"},
                    "pageSize": {"type": "integer"},
                    "data": {
                        "type": "array",
                        "items": {"$ref": "#/components/schemas/Thing"},
                    },
                },
            },
        }
    },
}

USE_UNUSUAL = """
import sys

import service_api_client
from service_api_client import Client
from service_api_client.api import LIST_ENDPOINTS
from service_api_client.models import Thing

assert service_api_client.__file__.startswith(sys.argv[1]), service_api_client.__file__
client = Client(base_url="http://127.0.0.1:9")
print(sorted(n for n, v in vars(Client).items() if isinstance(v, property)))
print(sorted(n for n in dir(client.things) if not n.startswith("_")))
thing = Thing.from_dict({"thingId": "t", "keys": "k", "get": 1, "from": "f", "list": ["a"]})
assert (thing.keys_, thing.get_, thing.from_, thing.list_) == ("k", 1, "f", ["a"]), thing
assert list(thing.keys()) == ["thingId", "keys", "get", "from", "list"], thing.keys()
assert thing.get("keys") == "k" and thing["from"] == "f", thing
print(sorted(LIST_ENDPOINTS))
"""


@pytest.fixture(scope="module")
def unusual(tmp_path_factory: pytest.TempPathFactory) -> SpecCopy:
    return generate_copy(tmp_path_factory.mktemp("unusual"), UNUSUAL)


def test_a_valid_spec_of_unusual_shapes_generates_a_client_that_imports(
    unusual: SpecCopy,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", USE_UNUSUAL, str(unusual.generated)],
        env=unusual.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    properties, things, lists = done.stdout.splitlines()
    # The tag "token" would hide the client's own attribute: it is token_api.
    assert {"aio", "things", "token_api", "default"} <= set(eval(properties))  # noqa: S307
    assert {"list", "import_things", "list_thing_labels"} <= set(eval(things))  # noqa: S307
    assert eval(lists) == ["things"]  # noqa: S307


def test_a_valid_spec_of_unusual_shapes_type_checks(unusual: SpecCopy) -> None:
    done = unusual.type_check()
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_spec_with_no_operation_generates_a_client(tmp_path: Path) -> None:
    empty = {
        "openapi": "3.0.3",
        "info": {"title": "Empty", "version": "1"},
        "paths": {},
    }
    made = generate_copy(tmp_path, empty)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from service_api_client import Client;"
            "from service_api_client.api import LIST_ENDPOINTS;"
            "print(repr(Client(base_url='http://h').aio), dict(LIST_ENDPOINTS))",
        ],
        env=made.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip() == "<AsyncResources of Client(base_url='http://h')> {}"
