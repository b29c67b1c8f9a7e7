"""The command line and dlt on a spec that grew as real services do: every list of the
grown copy's registry exports with ``service-api list`` and loads with
``service-api load``, whatever its shape.

The copy is the repository's spec with ``growth.yaml`` merged in (a sub-resource list of
a shipment's events, routes with integer, date-time and enum filters and a required
header, records with two ``...Id`` fields) and one more list of records with two
``...Id`` fields, neither named for it, and no item path (``lanes``), which has no
identifier of its own. It is
generated once for the module and served by the mock with a few records each; the
command line runs in child processes that read the copy's registry, never a list of
endpoints written here.
"""

from __future__ import annotations

import datetime
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from spec_copy import (
    GROWTH,
    PARAMETER_VALUES,
    REGISTRY_SCRIPT,
    SpecCopy,
    generate_copy,
    merged_spec,
    serve_spec,
)

from service_api_mock import DEMO_ACCOUNTS
from service_api_mock._schemas import Schemas
from service_api_spec import load_spec

ACCOUNT = DEMO_ACCOUNTS[0]
RECORDS = 12  # of each resource per account, and events of each shipment

# Records with two ...Id fields, neither named for them, and no item path: no identifier
# the spec can tell.
LANES = """
paths:
  /lanes:
    get:
      operationId: listLanes
      tags: [routes]
      summary: List the lanes carriers serve
      parameters:
        - $ref: "#/components/parameters/pageNumber"
        - $ref: "#/components/parameters/pageSize"
      responses:
        "200":
          description: One page of lanes.
          content:
            application/json:
              schema:
                type: object
                required: [totalRecords, pageNumber, pageSize, data]
                properties:
                  totalRecords: {type: integer}
                  pageNumber: {type: integer}
                  pageSize: {type: integer}
                  data:
                    type: array
                    items: {$ref: "#/components/schemas/Lane"}
        "401": {$ref: "#/components/responses/Unauthorized"}
        "403": {$ref: "#/components/responses/Forbidden"}
components:
  schemas:
    Lane:
      type: object
      properties:
        laneKey: {type: string, format: uuid}
        carrierId: {type: string}
        hubId: {type: string}
        distanceKm: {type: integer}
"""


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> SpecCopy:
    """growth.yaml and the lanes merged into the spec, generated once for the module."""
    document = merged_spec(GROWTH)
    lanes = yaml.safe_load(LANES)
    document["paths"].update(lanes["paths"])
    document["components"]["schemas"].update(lanes["components"]["schemas"])
    return generate_copy(tmp_path_factory.mktemp("growth-cli"), document)


@pytest.fixture(scope="module")
def base_url(grown: SpecCopy) -> Iterator[str]:
    with serve_spec(grown, "--records", str(RECORDS)) as url:
        yield url


@pytest.fixture(scope="module")
def registry(grown: SpecCopy) -> dict[str, Any]:
    """The copy's LIST_ENDPOINTS as its own child process reads it."""
    done = subprocess.run(
        [sys.executable, "-c", REGISTRY_SCRIPT],
        env=grown.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def listed(
    args: list[str], copy: SpecCopy, base_url: str, cwd: Path
) -> list[dict[str, Any]]:
    """The records ``service-api list ARGS`` writes, as JSON Lines."""
    done = copy.cli(["list", *args, "--account", ACCOUNT], base_url, cwd)
    assert done.returncode == 0, f"service-api list {args}: {done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines()]


def option(parameter: dict[str, Any]) -> str:
    return "--" + str(parameter["python_name"]).strip("_").replace("_", "-")


def required(
    name: str, registry: dict[str, Any], copy: SpecCopy, base_url: str, cwd: Path
) -> list[str]:
    """The arguments a list needs: each parent's id from a record of the parent's own
    listing (the registry's ``parent`` and ``parent_fields``), a parameter the parent
    takes too as given to it, else a value of its schema (a list of no listed parent);
    a value of its kind for any other parameter."""
    entry = registry[name]
    args, more, first = [], [], {}
    if entry["parent"] in registry:
        more = required(entry["parent"], registry, copy, base_url, cwd)
        found = listed(
            [entry["parent"], *more, "--max-items", "1"], copy, base_url, cwd
        )
        assert found, f"{name}: no record of its parent {entry['parent']} ({more})"
        first = found[0]
    for parameter in entry["parameters"]:
        if not parameter["required"]:
            continue
        value = PARAMETER_VALUES[parameter["kind"]]
        if parameter["choices"]:
            value = str(parameter["choices"][0])
        if parameter["location"] != "path":
            args += ["--param", f"{parameter['name']}={value}"]
            continue
        field = entry["parent_fields"].get(parameter["name"])
        if option(parameter) in more:
            value = more[more.index(option(parameter)) + 1]
        elif field in first:
            value = str(first[field])
        else:
            value = str(built(copy, name, parameter["name"]))
        args += [option(parameter), value]
    return args


def built(copy: SpecCopy, name: str, parameter: str) -> Any:
    """A value of the schema of the path parameter ``parameter`` of the list ``name``
    (its pattern, its length met), as the mock builds one."""
    spec = load_spec(copy.spec)
    (listing,) = [o for o in spec.operations if (o.kind, o.resource) == ("list", name)]
    (found,) = [
        p for p in listing.parameters if (p.name, p.location) == (parameter, "path")
    ]
    assert found.pointer is not None, f"{name}: {parameter} has no schema"
    value = Schemas(spec.schemas).build(found.pointer, random.Random(0), parameter)
    assert value is not None, f"{name}: no value fits {parameter}"
    return value


# ---- service-api list ----------------------------------------------------------------


def _exports(
    name: str, registry: dict[str, Any], copy: SpecCopy, base_url: str, cwd: Path
) -> None:
    """``service-api list NAME`` writes the records of the parent asked for."""
    args = required(name, registry, copy, base_url, cwd)
    done = copy.cli(["list", name, *args, "--account", ACCOUNT], base_url, cwd)
    assert done.returncode == 0, f"service-api list {name}: {done.stderr}"
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records, f"service-api list {name} wrote no record"
    assert f"exported {len(records)} record" in done.stderr, done.stderr
    for parameter in registry[name]["parameters"]:
        if parameter["location"] == "path" and parameter["name"] in records[0]:
            # A sub-resource list gives the records of the parent asked for.
            given = args[args.index(option(parameter)) + 1]
            assert {str(r[parameter["name"]]) for r in records} == {given}, name


def test_every_list_of_the_registry_exports(
    grown: SpecCopy, base_url: str, registry: dict[str, Any], tmp_path: Path
) -> None:
    # What growth.yaml adds is there (a sub-resource list, a list with a header).
    assert {"shipment-events", "routes", "lanes"} <= registry.keys()
    failed = []  # every list that fails, not only the first
    for name in registry:
        try:
            _exports(name, registry, grown, base_url, tmp_path)
        except AssertionError as exc:
            failed.append(str(exc).splitlines()[0])
    assert not failed, "\n".join(failed)


def test_a_missing_parent_id_or_header_is_a_usage_error_naming_the_option(
    grown: SpecCopy, base_url: str, tmp_path: Path
) -> None:
    events = grown.cli(["list", "shipment-events"], base_url, tmp_path)
    assert events.returncode == 2
    assert "needs --shipment-id VALUE" in events.stderr
    routes = grown.cli(["list", "routes"], base_url, tmp_path)
    assert routes.returncode == 2
    assert "needs --x-request-source VALUE" in routes.stderr


def _routes(copy: SpecCopy, base_url: str, cwd: Path, *more: str) -> list[Any]:
    return listed(["routes", "--x-request-source", "cli", *more], copy, base_url, cwd)


def _moment(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text)


def test_filters_by_spec_and_snake_names(
    grown: SpecCopy, base_url: str, tmp_path: Path
) -> None:
    every = _routes(grown, base_url, tmp_path)
    assert len(every) == RECORDS

    best = max(r["rating"] for r in every)
    expected = [r for r in every if r["rating"] >= best]
    assert 0 < len(expected) < len(every)
    for name in ("minRating", "min_rating"):
        got = _routes(grown, base_url, tmp_path, "--param", f"{name}={best}")
        assert got == expected, name

    moments = sorted(_moment(r["createdAt"]) for r in every)
    middle = moments[len(moments) // 2]
    expected = [r for r in every if _moment(r["createdAt"]) > middle]
    assert 0 < len(expected) < len(every)
    spelled = {
        "createdAfter": middle.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "created_after": middle.isoformat(),
    }
    for name, value in spelled.items():
        got = _routes(grown, base_url, tmp_path, "--param", f"{name}={value}")
        assert got == expected, (name, value)

    status = every[0]["status"]
    expected = [r for r in every if r["status"] == status]
    got = _routes(grown, base_url, tmp_path, "--param", f"status={status}")
    assert got == expected

    # An enum whose Python name differs from the spec's: type of an event (type_).
    shipment = listed(["shipments", "--max-items", "1"], grown, base_url, tmp_path)
    parent = ["shipment-events", "--shipment-id", shipment[0]["shipmentId"]]
    events = listed(parent, grown, base_url, tmp_path)
    kind = events[0]["type"]
    for name in ("type", "type_"):
        got = listed([*parent, "--param", f"{name}={kind}"], grown, base_url, tmp_path)
        assert got == [e for e in events if e["type"] == kind], name


@pytest.mark.parametrize(
    ("pair", "said"),
    [
        ("minRating=high", "--param minRating='high': expected an integer"),
        ("min_rating=4.5", "--param min_rating='4.5': expected an integer"),
        (
            "createdAfter=yesterday",
            "--param createdAfter='yesterday': expected an ISO 8601 date-time",
        ),
        (
            "status=Lost",
            "--param status='Lost': expected one of Draft, Active, Retired",
        ),
        ("colour=red", "endpoint 'routes' has no parameter 'colour'"),
    ],
)
def test_bad_values_are_usage_errors_naming_the_parameter(
    grown: SpecCopy, base_url: str, tmp_path: Path, pair: str, said: str
) -> None:
    args = ["list", "routes", "--x-request-source", "cli", "--param", pair]
    done = grown.cli(args, base_url, tmp_path)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert "Traceback" not in done.stderr


# ---- service-api load ----------------------------------------------------------------


def load(
    args: list[str], copy: SpecCopy, base_url: str, cwd: Path
) -> subprocess.CompletedProcess[str]:
    pytest.importorskip(
        "dlt", reason="dlt is not installed: pip install 'service-api[dlt]'"
    )
    argv = ["load", *args, "--account", ACCOUNT, "--pipelines-dir", "state"]
    return copy.cli(argv, base_url, cwd)


def query(cwd: Path, sql: str) -> list[Any]:
    duckdb = pytest.importorskip(
        "duckdb", reason="duckdb is not installed: pip install 'service-api[dlt]'"
    )
    with duckdb.connect(str(cwd / "service_api.duckdb"), read_only=True) as database:
        rows: list[Any] = database.execute(sql).fetchall()
    return rows


def primary_key(cwd: Path, table: str) -> set[str]:
    """The columns dlt made the table's primary key, from the schema it stored."""
    (schema,) = query(
        cwd, "select schema from raw._dlt_version order by inserted_at desc limit 1"
    )[0]
    columns = json.loads(schema)["tables"][table]["columns"]
    return {name for name, column in columns.items() if column.get("primary_key")}


def test_a_sub_resource_list_loads_one_parent_or_every_parent(
    grown: SpecCopy, base_url: str, tmp_path: Path
) -> None:
    shipments = listed(["shipments"], grown, base_url, tmp_path)
    first = shipments[0]["shipmentId"]
    events = listed(
        ["shipment-events", "--shipment-id", first], grown, base_url, tmp_path
    )

    one = load(["shipment-events", "--shipment-id", first], grown, base_url, tmp_path)
    assert one.returncode == 0, one.stderr
    assert f"loaded shipment-events: {len(events)} rows" in one.stderr
    rows = query(
        tmp_path, "select shipment_id, event_id, account from raw.shipment_events"
    )
    assert sorted(rows) == sorted((first, e["eventId"], ACCOUNT) for e in events)
    # The parent's id is a column, part of the key with the record's id and the account.
    assert primary_key(tmp_path, "shipment_events") == {
        "event_id",
        "shipment_id",
        "account",
    }

    # Without it, every parent's events: each shipment's, the first one's merged again.
    every = load(["shipment-events"], grown, base_url, tmp_path)
    assert every.returncode == 0, every.stderr
    total = len(shipments) * RECORDS
    assert f"{total - len(events)} new, {len(events)} already there" in every.stderr
    counted = query(
        tmp_path,
        "select shipment_id, count(*), count(distinct event_id) "
        "from raw.shipment_events group by 1",
    )
    assert sorted(counted) == sorted(
        (s["shipmentId"], RECORDS, RECORDS) for s in shipments
    )


def test_routes_load_on_their_id_and_lanes_replaced_or_on_the_key_given(
    grown: SpecCopy, base_url: str, tmp_path: Path
) -> None:
    # Two ...Id fields and an item path (/routes/{routeId}): the path says the id.
    routes = load(["routes", "--x-request-source", "cli"], grown, base_url, tmp_path)
    assert routes.returncode == 0, routes.stderr
    assert f"loaded routes: {RECORDS} rows" in routes.stderr
    assert primary_key(tmp_path, "routes") == {"route_id", "account"}

    # Two ...Id fields, neither laneId, and no item path: no identifier, so each load
    # replaces the table, unless the user names a key to merge on.
    lanes = listed(["lanes"], grown, base_url, tmp_path)
    for _ in range(2):
        done = load(["lanes"], grown, base_url, tmp_path)
        assert done.returncode == 0, done.stderr
        assert f"loaded lanes: {len(lanes)} rows, the table replaced" in done.stderr
        assert query(tmp_path, "select count(*) from raw.lanes") == [(len(lanes),)]
    assert primary_key(tmp_path, "lanes") == set()
    keyed = tmp_path / "keyed"
    keyed.mkdir()
    for new in (len(lanes), 0):
        done = load(["lanes", "--primary-key", "laneKey"], grown, base_url, keyed)
        assert done.returncode == 0, done.stderr
        assert f"loaded lanes: {len(lanes)} rows, {new} new" in done.stderr
    assert primary_key(keyed, "lanes") == {"lane_key", "account"}
    rows = query(keyed, "select lane_key, carrier_id from raw.lanes")
    assert sorted(rows) == sorted(
        (lane["laneKey"], lane["carrierId"]) for lane in lanes
    )
