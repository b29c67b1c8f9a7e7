"""A copy of the repository's spec with a resource added, its client generated and its
mock served: what a user who edits ``openapi.yaml`` and runs ``make`` gets, built in a
temporary folder so that the repository itself is never touched.

Example::

    copy = build_spec_copy(tmp_path)  # openapi.yaml + alerts.yaml, generated client
    with serve_spec(copy) as base_url:
        subprocess.run([sys.executable, "-c", "..."], env=copy.env(base_url), check=True)
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import yaml

from service_api_mock import DEMO_ACCOUNTS, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET

ROOT = Path(__file__).resolve().parents[2]

#: Stoplight Prism (npm ``@stoplight/prism-cli``), a spec-driven server the project did
#: not write: ``$PRISM``, else the copy ``make`` installs under ``.tools/prism``, else one
#: on PATH; None where none is installed (the tests that need it skip, naming it).
PRISM: Path | None = next(
    (
        Path(found)
        for found in (
            os.environ.get("PRISM"),
            ROOT / ".tools" / "prism" / "node_modules" / ".bin" / "prism",
            shutil.which("prism"),
        )
        if found and Path(found).exists()
    ),
    None,
)
ALERTS = Path(__file__).with_name("alerts.yaml")
GROWTH = Path(__file__).with_name("growth.yaml")
START_TIMEOUT = 30.0
LISTENING = re.compile(r"listening on (http://\S+)")


#: mypy's cache for the type checks of generated copies, apart from the repository's
#: own (the copies' service_api_client would evict its entries); mypy tells what
#: changed, so it serves every run and every copy. ``make clean`` removes it.
TYPE_CHECK_CACHE = ROOT / ".mypy_cache" / "spec-copies"
# Package content and usage -> the one type check of them in this process.
_TYPE_CHECKS: dict[str, subprocess.CompletedProcess[str]] = {}


class SpecEditError(RuntimeError):
    """The edited spec could not be generated or served; the message says which step."""


@dataclass(frozen=True)
class SpecCopy:
    """A folder laid out like the repository for the generator (``openapi.yaml``,
    ``codegen/``), and the client generated from it.

    Example::

        copy.spec                         # .../openapi.yaml, the edited copy
        copy.generated / "service_api_client"
    """

    root: Path
    generated: Path

    @property
    def spec(self) -> Path:
        """The edited ``openapi.yaml``."""
        return self.root / "openapi.yaml"

    def cli(
        self, args: list[str], base_url: str, cwd: Path
    ) -> subprocess.CompletedProcess[str]:
        """``service-api ARGS`` with the generated client, against the mock at
        ``base_url``, in ``cwd``."""
        return subprocess.run(
            [sys.executable, "-m", "service_api_cli", *args],
            cwd=cwd,
            env=self.env(base_url),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def type_check(self, usage: str = "") -> subprocess.CompletedProcess[str]:
        """``mypy --strict`` over the generated package and, if given, ``usage`` (code
        that uses it, as a module beside it), run in the copy's folder.

        One run per package content and usage, shared by the tests that ask for it in
        this process; mypy's own cache (``TYPE_CHECK_CACHE``, one at a time) spares
        every run the standard library, httpx, attrs and the overlay checked before.

        Example::

            done = copy.type_check("import service_api_client")
            assert done.returncode == 0, done.stdout
        """
        package = self.generated / "service_api_client"
        digest = hashlib.sha256(usage.encode())
        for path in sorted(package.rglob("*.py")):
            digest.update(f"{path.relative_to(package)}\0".encode())
            digest.update(path.read_bytes())
        key = digest.hexdigest()
        if key in _TYPE_CHECKS:
            return _TYPE_CHECKS[key]
        targets = [str(package)]
        if usage:
            module = self.root / f"use_generated_{key[:12]}.py"
            module.write_text(usage, "utf-8")
            targets.append(str(module))
        TYPE_CHECK_CACHE.mkdir(parents=True, exist_ok=True)
        with (TYPE_CHECK_CACHE / "lock").open("w") as lock:
            # mypy's cache is one writer's: other test processes wait their turn.
            fcntl.flock(lock, fcntl.LOCK_EX)
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "mypy",
                    "--strict",
                    "--cache-dir",
                    str(TYPE_CHECK_CACHE),
                    *targets,
                ],
                cwd=self.root,
                env=self.env(MYPYPATH=str(self.generated)),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        _TYPE_CHECKS[key] = done
        return done

    def env(self, base_url: str | None = None, **extra: str) -> dict[str, str]:
        """The environment of a child process that uses the generated client: its package
        first on the path, ahead of the repository's own, and with ``base_url`` the mock's
        address and the demo credentials in the ``SERVICE_API_*`` variables.

        Example::

            subprocess.run(["service-api", "list", "alerts"], env=copy.env(base_url))
        """
        env = {k: v for k, v in os.environ.items() if not k.startswith("SERVICE_API_")}
        path = [str(self.generated), *filter(None, [env.get("PYTHONPATH")])]
        # The virtualenv's commands (service-api, service-api-mock) as a shell finds them.
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = os.pathsep.join(path)
        env["RUNTIME__DLTHUB_TELEMETRY"] = "false"
        if base_url is not None:
            env.update(
                SERVICE_API_BASE_URL=base_url,
                SERVICE_API_CLIENT_ID=DEMO_CLIENT_ID,
                SERVICE_API_CLIENT_SECRET=DEMO_CLIENT_SECRET,
                SERVICE_API_ACCOUNT_ID=DEMO_ACCOUNTS[0],
            )
        env.update(extra)
        return env


def merged_spec(
    fragment: Path = ALERTS, spec: Path = ROOT / "openapi.yaml"
) -> dict[str, Any]:
    """``spec`` with ``fragment`` merged in: its tags appended, its paths and component
    schemas added. A part the spec already has as the fragment writes it is kept (a spec
    that already has the resource is tested as it is); one it has otherwise is an error,
    not an overwrite.

    Example::

        merged_spec()["paths"]["/alerts"]["get"]["operationId"]  # "listAlerts"
    """
    document: dict[str, Any] = yaml.safe_load(spec.read_text("utf-8"))
    extra: dict[str, Any] = yaml.safe_load(fragment.read_text("utf-8"))
    tags = document.setdefault("tags", [])
    tags += [tag for tag in extra.get("tags", []) if tag not in tags]
    for section, key in (("paths", None), ("components", "schemas")):
        target = document.setdefault(section, {})
        source = extra.get(section, {})
        if key is not None:
            target, source = target.setdefault(key, {}), source.get(key, {})
        clash = sorted(
            name for name in set(target) & set(source) if target[name] != source[name]
        )
        if clash:
            raise SpecEditError(
                f"{spec.name} already has {clash} in {section}, unlike {fragment.name}: "
                f"rename the example resource of {fragment.name}"
            )
        target.update(source)
    return document


def build_spec_copy(folder: Path, fragment: Path = ALERTS) -> SpecCopy:
    """Write the spec with ``fragment`` merged and the generator's files into ``folder``,
    then run ``codegen/generate.py`` there, as ``make`` would (5 to 20 s).

    Example::

        copy = build_spec_copy(tmp_path)
    """
    return generate_copy(folder, merged_spec(fragment))


def generate_copy(folder: Path, document: Mapping[str, Any]) -> SpecCopy:
    """Write ``document`` as ``openapi.yaml`` and the generator's files into ``folder``,
    then run ``codegen/generate.py`` there; SpecEditError, with what the generator said,
    if it fails.

    Example::

        document = yaml.safe_load(Path("openapi.yaml").read_text())
        copy = generate_copy(tmp_path, document | {"tags": []})
    """
    root, generated = folder / "repo", folder / "generated"
    root.mkdir(parents=True)
    shutil.copytree(
        ROOT / "codegen", root / "codegen", ignore=shutil.ignore_patterns("__pycache__")
    )
    text = yaml.safe_dump(dict(document), sort_keys=False, allow_unicode=True)
    (root / "openapi.yaml").write_text(text, "utf-8")
    result = subprocess.run(
        [sys.executable, str(root / "codegen" / "generate.py"), str(generated)],
        cwd=root,
        env=SpecCopy(root, generated).env(),  # ruff from this virtualenv
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        raise SpecEditError(
            f"codegen/generate.py failed on the edited spec (exit {result.returncode}):\n"
            f"{result.stdout[-3000:]}{result.stderr[-3000:]}"
        )
    return SpecCopy(root=root, generated=generated)


def load_generated(copy: SpecCopy, name: str) -> ModuleType:
    """The copy's generated package, imported in this process under ``name``: beside the
    repository's own ``service_api_client``, which it leaves alone (the generated modules
    import each other by relative imports only). Its models, doors and registry are then
    ``name.models``, ``name.api``, ...

    Example::

        grown = load_generated(copy, "grown_client")
        importlib.import_module("grown_client.api").LIST_ENDPOINTS
    """
    folder = copy.generated / "service_api_client"
    loaded = sys.modules.get(name)
    if loaded is not None:
        if Path(str(loaded.__file__)).parent != folder:
            raise ValueError(f"{name} is already another package: {loaded.__file__}")
        return loaded
    found = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert found is not None
    assert found.loader is not None
    package = importlib.util.module_from_spec(found)
    sys.modules[name] = package
    found.loader.exec_module(package)
    return package


@contextlib.contextmanager
def serve_spec(copy: SpecCopy, *args: str) -> Iterator[str]:
    """Run ``python -m service_api_mock --spec <copy> --port 0`` as users start the mock,
    until it answers; yields its base URL (``http://127.0.0.1:<port>/public/v3``). Its log
    is ``mock.log`` beside the copy; the process is stopped on exit.

    Example::

        with serve_spec(copy) as base_url:
            httpx.get(f"{base_url}/alerts")  # 401: no token
    """
    log = copy.root / "mock.log"
    command = [
        sys.executable,
        "-m",
        "service_api_mock",
        "--spec",
        str(copy.spec),
        "--port",
        "0",
    ]
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(
            [*command, *args],
            cwd=copy.root,
            env=copy.env(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        base_url = _wait_until_listening(process, log)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _wait_until_listening(process: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        text = log.read_text("utf-8", errors="replace")
        found = LISTENING.search(text)
        if found is not None:
            base_url = found.group(1)
            with contextlib.suppress(httpx.TransportError):
                # Any answer will do: the port is bound before the line is printed.
                httpx.get(f"{base_url}/authenticate", timeout=1)
                return base_url
        if process.poll() is not None:
            raise SpecEditError(
                f"the mock stopped (exit {process.returncode}) before serving "
                f"the edited spec:\n{text[-3000:]}"
            )
        if time.monotonic() > deadline:
            raise SpecEditError(
                f"the mock did not start in {START_TIMEOUT:.0f} s:\n{text[-3000:]}"
            )
        time.sleep(0.05)


def token(base_url: str) -> str:
    """A bearer token for the demo credentials from the served mock.

    Example::

        httpx.get(f"{base_url}/alerts", headers=auth_headers(base_url))
    """
    response = httpx.post(
        f"{base_url}/authenticate",
        files={
            "client_id": (None, DEMO_CLIENT_ID),
            "client_secret": (None, DEMO_CLIENT_SECRET),
            "grant_type": (None, "client_credentials"),
        },
    )
    response.raise_for_status()
    value: str = response.json()["access_token"]
    return value


def auth_headers(base_url: str) -> dict[str, str]:
    """The headers of a call as the first demo account: a fresh token and the account.

    Example::

        httpx.get(f"{base_url}/alerts", headers=auth_headers(base_url))
    """
    return {
        "Authorization": f"Bearer {token(base_url)}",
        "x-service-account-id": DEMO_ACCOUNTS[0],
    }


#: A value of each kind of parameter, as the command line takes it (an array as a,b).
PARAMETER_VALUES = {
    "string": "cli-test",
    "integer": "1",
    "number": "1.5",
    "boolean": "true",
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "array": "a,b",
}

#: A script that prints a generated copy's registry as JSON (run with the copy's
#: interpreter and path): each list's identifier, parent and parameters.
REGISTRY_SCRIPT = """
import dataclasses, json
from service_api_client.api import LIST_ENDPOINTS
print(json.dumps({
    name: {
        "id_field": endpoint.id_field,
        "parent": endpoint.parent,
        "parent_fields": dict(endpoint.parent_fields),
        "parameters": [dataclasses.asdict(p) for p in endpoint.parameters],
    }
    for name, endpoint in LIST_ENDPOINTS.items()
}, default=str))
"""


@contextlib.asynccontextmanager
async def signed_in(
    app: Any, account: str = DEMO_ACCOUNTS[0]
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the mock ``app`` in process (``MockService.app``), signed in with
    the demo credentials and sending ``account`` as its account header.

    Example::

        async with signed_in(service.app) as api:
            assert (await api.get("/devices")).status_code == 200
    """
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://mock.test/public/v3"
    ) as client:
        form = {
            "client_id": (None, DEMO_CLIENT_ID),
            "client_secret": (None, DEMO_CLIENT_SECRET),
            "grant_type": (None, "client_credentials"),
        }
        token = (await client.post("/authenticate", files=form)).json()["access_token"]
        client.headers.update(
            {"authorization": f"Bearer {token}", "x-service-account-id": account}
        )
        yield client
