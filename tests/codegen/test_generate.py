"""codegen/generate.py: the spec is the single source of the generated client."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from spec_copy import ROOT, generate_copy

from service_api_client import Client
from service_api_client.api import TAG_ATTRIBUTES
from service_api_client.client import AsyncResources
from service_api_spec import load_spec

NEW_OPERATION = {
    "get": {
        "operationId": "listAlerts",
        "tags": ["alerts"],
        "summary": "List the alerts of the account",
        "parameters": [
            {"$ref": "#/components/parameters/pageNumber"},
            {"$ref": "#/components/parameters/pageSize"},
        ],
        "responses": {
            "200": {
                "description": "One page of alerts.",
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "required": [
                                "totalRecords",
                                "pageNumber",
                                "pageSize",
                                "data",
                            ],
                            "properties": {
                                "totalRecords": {"type": "integer"},
                                "pageNumber": {"type": "integer"},
                                "pageSize": {"type": "integer"},
                                "data": {
                                    "type": "array",
                                    "items": {"$ref": "#/components/schemas/Alert"},
                                },
                            },
                            "title": "AlertPage",
                        }
                    }
                },
            }
        },
    }
}


# Models that refer to themselves and to each other: each module imports the others
# at its end, so that the package imports whatever the order of its modules.
NEW_SCHEMAS = {
    "Alert": {
        "type": "object",
        "properties": {
            "alertId": {"type": "string"},
            "parent": {"$ref": "#/components/schemas/Alert"},
            "rule": {"$ref": "#/components/schemas/AlertRule"},
            # One of each other kind the model template checks (see model.py.jinja).
            "severity": {"type": "string", "enum": ["low", "high"]},
            "count": {"type": "integer"},
            "acknowledged": {"type": "boolean"},
            "day": {"type": "string", "format": "date"},
            "raisedAt": {"type": "string", "format": "date-time"},
            "scores": {"type": "array", "items": {"type": "number"}},
            "ref": {"type": "string", "format": "uuid"},
            "anything": {},
        },
    },
    "AlertRule": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "examples": {
                "type": "array",
                "items": {"$ref": "#/components/schemas/Alert"},
            },
        },
    },
}


@pytest.fixture(scope="module")
def project_with_new_operation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package generated from a copy of the spec that gained GET /alerts."""
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    spec["paths"]["/alerts"] = NEW_OPERATION
    spec["components"]["schemas"].update(NEW_SCHEMAS)
    return generate_copy(tmp_path_factory.mktemp("project"), spec).generated


def test_a_new_operation_becomes_a_typed_function(
    project_with_new_operation: Path,
) -> None:
    module_path = (
        project_with_new_operation / "service_api_client/api/alerts/list_alerts.py"
    )
    source = module_path.read_text()
    assert "def sync_detailed(" in source
    assert "async def asyncio_detailed(" in source
    assert "\nSUCCESS_MODEL = " in source

    # In a child interpreter: importing a second copy of service_api_client here would
    # leave other tests holding modules that are no longer the ones in sys.modules.
    check = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from service_api_client.api.alerts import list_alerts as m;"
        "assert m.__file__ == sys.argv[2], m.__file__;"
        "page = m.SUCCESS_MODEL.from_dict({'totalRecords': 1, 'pageNumber': 1,"
        " 'pageSize': 50, 'data': [{'alertId': 'a-1'}]});"
        "assert page.data[0].alert_id == 'a-1'"
    )
    subprocess.run(
        [
            sys.executable,
            "-c",
            check,
            str(project_with_new_operation),
            str(module_path),
        ],
        check=True,
    )


def test_models_referring_to_themselves_and_each_other_work(
    project_with_new_operation: Path,
) -> None:
    check = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from service_api_client.api.alerts import list_alerts;"
        "raw = {'totalRecords': 1, 'pageNumber': 1, 'pageSize': 50, 'data': [{'alertId': 'a-2',"
        " 'parent': {'alertId': 'a-1'}, 'rule': {'name': 'r', 'examples': [{'alertId': 'a-0'}]}}]};"
        "page = list_alerts.SUCCESS_MODEL.from_dict(raw);"
        "alert = page.data[0];"
        "assert alert.parent.alert_id == 'a-1';"
        "assert alert.rule.examples[0].alert_id == 'a-0';"
        "assert type(alert.rule.examples[0]) is type(alert);"
        "assert page.to_dict() == raw, page.to_dict()"
    )
    subprocess.run(
        [sys.executable, "-c", check, str(project_with_new_operation)], check=True
    )


def test_the_new_module_type_checks(project_with_new_operation: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            str(project_with_new_operation / "service_api_client"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


ODD_ALERT = (
    "{'alertId': 7, 'severity': 'urgent', 'count': True, 'acknowledged': 1,"
    " 'day': '2024-02-30', 'raisedAt': '2024-05-01T08:30:00.5Z', 'scores': [1, 2.5, 'x'],"
    " 'ref': 'not-a-uuid', 'anything': [None], 'parent': None, 'rule': 'r', 'extra': {}}"
)


def test_every_kind_of_field_keeps_a_value_it_cannot_hold(
    project_with_new_operation: Path,
) -> None:
    """A value of another type stays as sent; one that fits is typed; to_dict gives back
    exactly what was sent, the date-time's "Z" and fraction included."""
    check = (
        "import sys, json, datetime, uuid; sys.path.insert(0, sys.argv[1]);"
        "from service_api_client.models import Alert;"
        "from service_api_client.types import UNSET;"
        f"raw = {ODD_ALERT};"
        "alert = Alert.from_dict(raw);"
        "kept = sorted(alert.additional_properties);"
        "assert kept == ['acknowledged', 'alertId', 'count', 'day', 'extra', 'parent', 'ref',"
        " 'rule', 'scores', 'severity'], kept;"
        "assert alert.raised_at == datetime.datetime(2024, 5, 1, 8, 30, 0, 500000,"
        " tzinfo=datetime.timezone.utc);"
        "assert alert.anything == [None];"
        "assert json.dumps(alert.to_dict(), sort_keys=True) == json.dumps(raw, sort_keys=True);"
        "good = Alert.from_dict({'severity': 'high', 'count': 3, 'acknowledged': False,"
        " 'day': '2024-02-29', 'scores': [1, 2.5], 'ref': str(uuid.UUID(int=1))});"
        "assert good.additional_properties == {}, good.additional_properties;"
        "assert good.severity == 'high' and good.count == 3 and good.acknowledged is False;"
        "assert good.day == datetime.date(2024, 2, 29) and good.ref == uuid.UUID(int=1);"
        "assert good.to_dict()['day'] == '2024-02-29'"
    )
    subprocess.run(
        [sys.executable, "-c", check, str(project_with_new_operation)], check=True
    )


def test_the_new_list_endpoint_names_its_page_model_and_id(
    project_with_new_operation: Path,
) -> None:
    source = (
        project_with_new_operation / "service_api_client/api/alerts/list_alerts.py"
    ).read_text()
    assert "\nSUCCESS_MODEL = ListAlertsAlertPage\n" in source
    assert '\nID_ATTRIBUTE = "alert_id"\n' in source


def test_parameter_descriptions_reach_the_docstrings() -> None:
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    source = (
        ROOT / "generated/service_api_client/api/shipments/list_shipments.py"
    ).read_text()
    for name, python_name in (("pageNumber", "page_number"), ("pageSize", "page_size")):
        first_words = " ".join(
            spec["components"]["parameters"][name]["description"].split()[:5]
        )
        assert f"{python_name} (int | Unset): {first_words}" in source


def test_every_tag_with_a_door_is_a_property_of_the_client() -> None:
    """The tags of the spec's operations with a door (every one but the token request,
    the client's own job) are the generated client's properties beside ``aio``, on
    ``client`` and on ``client.aio`` alike, under the attribute the generated registry
    gives."""
    spec = load_spec(ROOT / "openapi.yaml")
    attributes = {TAG_ATTRIBUTES[op.tag] for op in spec.operations if op.door}
    assert attributes  # the spec has operations with doors
    assert {n for n, v in vars(Client).items() if isinstance(v, property)} == (
        attributes | {"aio"}
    )
    assert {
        n for n, v in vars(AsyncResources).items() if isinstance(v, property)
    } == attributes
