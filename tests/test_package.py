"""The distribution: public names, typing markers, and a wheel holding every package."""

import importlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = [
    "service_api",
    "service_api_client",
    "service_api_mock",
    "service_api_cli",
    "service_api_speccheck",
]


#: The public names of ``service_api``, re-exported in the ``import X as X`` form.
SERVICE_API = [
    "AnswerObserver",
    "ApiConnectionError",
    "ApiStatusError",
    "ApiTimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "Client",
    "ConfigurationError",
    "InconsistentPageError",
    "InvalidCredentialsError",
    "InvalidRecordError",
    "InvalidResponseError",
    "ListOperation",
    "NotFoundError",
    "Page",
    "PageModel",
    "Pager",
    "Pages",
    "PaginationWarning",
    "PermissionDeniedError",
    "RateLimitError",
    "RetryPolicy",
    "ServerError",
    "ServiceApiError",
    "StoredToken",
    "TokenExpiredError",
    "TokenResponseError",
    "TokenStore",
    "paginate",
    "setup_logging",
    "testing",
]


def test_service_api_exports_exactly_its_public_names() -> None:
    import service_api

    public = {n for n in vars(service_api) if not n.startswith("_")}
    subpackages = {"dlt", "quota"}  # present once imported, documented on their own
    assert public - subpackages == set(SERVICE_API)


def test_the_reference_page_documents_every_public_name() -> None:
    page = (ROOT / "docs" / "reference" / "service_api.md").read_text()
    listed = {
        line.strip().removeprefix("- ") for line in page.splitlines() if "- " in line
    }
    # testing has a page of its own; paginate is another name of Pager.
    assert listed == set(SERVICE_API) - {"testing", "paginate"}


@pytest.mark.parametrize(
    "name",
    [
        "service_api",
        "service_api.quota",
        "service_api_mock",
        "service_api_cli",
        "service_api_speccheck",
    ],
)
def test_public_names_are_sorted_exported_and_documented(name: str) -> None:
    module = importlib.import_module(name)
    exported = SERVICE_API if name == "service_api" else list(module.__all__)
    assert exported == sorted(exported), f"{name}.__all__ is not sorted"
    for public in exported:
        obj = getattr(module, public)
        assert getattr(obj, "__doc__", None), f"{name}.{public} has no docstring"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "--wheel-dir",
            str(out),
            str(ROOT),
        ],
        check=True,
    )
    (built,) = out.glob("service_api-*.whl")
    return built


def test_wheel_holds_every_package_with_its_typing_marker(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in PACKAGES:
        assert f"{package}/__init__.py" in names
        assert f"{package}/py.typed" in names
    assert not any("__pycache__" in n or ".ruff_cache" in n for n in names)


def test_wheel_packages_import_on_their_own(wheel: Path, tmp_path: Path) -> None:
    zipfile.ZipFile(wheel).extractall(tmp_path)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import service_api, service_api_client;"
        "from service_api_client.api.shipments import list_shipments;"
        "print(service_api.__file__); print(list_shipments.__file__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    # Both from the wheel's files, not from the repository the tests run in.
    imported = [Path(line) for line in done.stdout.splitlines()]
    assert len(imported) == 2, done.stdout
    for path in imported:
        assert path.is_relative_to(tmp_path), path
