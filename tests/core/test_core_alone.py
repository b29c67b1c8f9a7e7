"""The core alone: ``pip install service-api`` with no extra is a working client.

``make test-core`` runs tests/core in a fresh virtualenv holding only the core's
dependencies (plus the mock's and pytest's, with ``CORE_ALONE=1``); ``make test`` runs
this module in the full one too. It needs no mock server (an in-process
``httpx.MockTransport``) and checks the modules an extra would load in a fresh
interpreter, so it means the same in both.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import httpx
import pytest

import service_api
from service_api_client.api.devices import list_devices

#: Top-level modules of the extras' dependencies: the core must load none of them.
EXTRA_MODULES = ("pyrate_limiter", "filelock", "redis", "dlt")
QUOTA_DEPENDENCIES = ("pyrate_limiter", "filelock")
#: The distributions the extras install (quota, redis, dlt, cli).
EXTRA_DISTRIBUTIONS = ("dlt", "duckdb", "filelock", "pyrate-limiter", "redis", "rich")
TOTAL = 23  # devices the fake service holds: three pages of ten


def fake_service(request: httpx.Request) -> httpx.Response:
    """The token endpoint and ``/devices``, paged by number, as the real service answers."""
    if request.url.path.endswith("/authenticate"):
        token = {
            "access_token": "t0k3n-core",
            "token_type": "Bearer",
            "expires_in": "3600",
        }
        return httpx.Response(200, json=token)
    number = int(request.url.params.get("pageNumber", "1"))
    size = int(request.url.params.get("pageSize", "10"))
    ids = range((number - 1) * size, min(number * size, TOTAL))
    page: dict[str, object] = {
        "totalRecords": TOTAL,
        "pageNumber": number,
        "pageSize": size,
    }
    if number * size < TOTAL:
        page["next"] = str(request.url.copy_set_param("pageNumber", number + 1))
    return httpx.Response(
        200, json={**page, "data": [{"deviceId": f"d{i}"} for i in ids]}
    )


def make_client(**options: object) -> service_api.Client:
    return service_api.Client(
        "http://core.invalid/public/v3",
        "core-client",
        "core-secret",
        "acct-1",
        httpx_args={"transport": httpx.MockTransport(fake_service)},
        **options,  # type: ignore[arg-type]
    )


def export_devices() -> list[str]:
    """Every device through the client, as a user would iterate a list endpoint."""
    with make_client() as client:
        return [
            str(d.device_id)
            for d in service_api.paginate(list_devices, client, page_size=10)
        ]


def test_importing_and_a_full_iteration_load_no_extra() -> None:
    # A fresh interpreter: in the full virtualenv other tests have loaded the extras.
    script = (
        "import json, sys, test_core_alone as t; ids = t.export_devices();"
        "print(json.dumps([len(ids), sorted({m.partition('.')[0] for m in sys.modules})]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    count, loaded = json.loads(done.stdout)
    assert count == TOTAL
    assert "service_api" in loaded
    assert [name for name in EXTRA_MODULES if name in loaded] == []


def test_the_extras_are_installed_only_in_the_full_virtualenv() -> None:
    # make test-core sets CORE_ALONE=1 in the virtualenv it builds without any extra.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "list",
            "--format=json",
            "--disable-pip-version-check",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    installed = {p["name"].lower().replace("_", "-") for p in json.loads(done.stdout)}
    assert "service-api" in installed
    present = [name for name in EXTRA_DISTRIBUTIONS if name in installed]
    core_alone = os.environ.get("CORE_ALONE") == "1"
    assert present == ([] if core_alone else list(EXTRA_DISTRIBUTIONS))


class _Blocker(importlib.abc.MetaPathFinder):
    """Refuses the import of ``names``, as an interpreter without them would."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = names

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


@contextlib.contextmanager
def missing(*names: str) -> Iterator[None]:
    """``names`` (and ``service_api.quota``, which imports them) cannot be imported."""
    hidden = {n: m for n, m in sys.modules.items() if n.partition(".")[0] in names}
    hidden |= {
        n: m for n, m in sys.modules.items() if n.startswith("service_api.quota")
    }
    quota: ModuleType | None = service_api.__dict__.pop("quota", None)
    for name in hidden:
        del sys.modules[name]
    blocker = _Blocker(names)
    sys.meta_path.insert(0, blocker)
    try:
        yield
    finally:
        sys.meta_path.remove(blocker)
        for name in [n for n in sys.modules if n.startswith("service_api.quota")]:
            del sys.modules[name]  # a half-imported package must not outlive the test
        sys.modules.update(hidden)
        if quota is not None:
            service_api.quota = quota


@pytest.mark.parametrize(
    ("options", "extra"),
    [
        ({"rate_limit": 10}, "quota"),
        ({"rate_limit": "adaptive"}, "quota"),
        ({"rate_store": "sqlite:///tmp/quota.db"}, "quota"),
        ({"token_store": "file:///tmp/service-api.token"}, "quota"),
        ({"rate_store": "redis://127.0.0.1:6379/0"}, "redis"),
        ({"token_store": "rediss://127.0.0.1:6379/0"}, "redis"),
    ],
)
@pytest.mark.parametrize("absent", QUOTA_DEPENDENCIES)
def test_a_quota_option_without_the_extra_names_the_pip_command(
    options: dict[str, object], extra: str, absent: str
) -> None:
    requests: list[httpx.Request] = []

    def recorded(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return fake_service(request)

    with missing(absent), pytest.raises(service_api.ConfigurationError) as caught:
        service_api.Client(
            "http://core.invalid/public/v3",
            "core-client",
            "core-secret",
            httpx_args={"transport": httpx.MockTransport(recorded)},
            **options,  # type: ignore[arg-type]
        )
    assert f"pip install 'service-api[{extra}]'" in str(caught.value)
    (option,) = options
    assert str(caught.value).startswith(f"{option}=")
    assert caught.value.variable == f"SERVICE_API_{option.upper()}"
    assert requests == []  # refused before anything was sent


def test_a_token_store_object_needs_no_extra() -> None:
    class MemoryStore:
        def __init__(self) -> None:
            self.saved: list[service_api.StoredToken] = []
            self._lock = threading.Lock()

        def load(self) -> service_api.StoredToken | None:
            return self.saved[-1] if self.saved else None

        def save(self, token: service_api.StoredToken) -> None:
            self.saved.append(token)

        @contextlib.contextmanager
        def lock(self) -> Iterator[None]:
            with self._lock:
                yield

    store = MemoryStore()
    with missing(*QUOTA_DEPENDENCIES), make_client(token_store=store) as client:
        ids = [
            str(d.device_id)
            for d in service_api.paginate(list_devices, client, page_size=10)
        ]
        assert "service_api.quota" not in sys.modules
    assert len(ids) == TOTAL
    assert [token.access_token for token in store.saved] == ["t0k3n-core"]
