"""The spec's document: read from YAML once, its nodes found by JSON pointer.

Only local references (``#/...``) are followed, as openapi-python-client follows them. A
problem is a :class:`SpecError` that names the file and, for YAML that does not parse,
the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "SpecDocument",
    "SpecError",
    "escape",
    "packaged_spec",
    "read_document",
    "steps",
    "unescape",
]

# References deeper than this are a loop (a $ref to a $ref to ... itself).
_MAX_REFERENCES = 32


class SpecError(ValueError):
    """openapi.yaml cannot be read as an OpenAPI document: the message names the file,
    the line where it is known, and the rule broken.

    Example::

        try:
            load_spec("openapi.yaml")
        except SpecError as exc:
            print(exc)  # openapi.yaml:12: #/paths/~1x/get/responses: ... points nowhere
    """


def escape(key: str) -> str:
    """``key`` as one step of a JSON pointer (RFC 6901).

    Example::

        escape("/shipments")  # "~1shipments"
    """
    return key.replace("~", "~0").replace("/", "~1")


def unescape(step: str) -> str:
    """One step of a JSON pointer (RFC 6901) as the key it names: the one reading of
    ``~1`` and ``~0`` every part of the project uses.

    Example::

        unescape("~1shipments")  # "/shipments"
    """
    return step.replace("~1", "/").replace("~0", "~")


def steps(pointer: str) -> list[str]:
    """The keys a JSON pointer (``#/a/b`` or ``/a/b``) names, unescaped.

    Example::

        steps("#/paths/~1shipments/get")  # ["paths", "/shipments", "get"]
    """
    return [unescape(step) for step in pointer.removeprefix("#").split("/")[1:]]


def packaged_spec() -> Path:
    """The spec the installed packages were built from: the copy a wheel carries (in
    ``service_api_mock/``), else the checkout's ``openapi.yaml``. The one place that
    knows where it is.

    Example::

        load_spec(packaged_spec())
    """
    package = Path(__file__).resolve().parent
    copies = (
        package.parent / "service_api_mock" / "openapi.yaml",
        package.parents[1] / "openapi.yaml",
    )
    return next((p for p in copies if p.is_file()), copies[-1])


def read_document(path: Path) -> SpecDocument:
    """The document of the YAML (or JSON) file at ``path``.

    Example::

        read_document(Path("openapi.yaml")).at("#/info/title")
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}: cannot be read: {exc}") from None
    try:
        # libyaml's safe loader where PyYAML was built with it: several times faster.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        document = yaml.load(text, Loader=loader)  # noqa: S506 -- a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecError(f"{where}: not valid YAML: {problem}") from None
    if not isinstance(document, dict):
        raise SpecError(f"{path}: not an OpenAPI document (a mapping at the top)")
    return SpecDocument(document, path)


class SpecDocument:
    """The document as read, with the ``$ref`` of any node followed on request.

    Example::

        schema, pointer = document.at("#/components/schemas/Shipment")
    """

    def __init__(self, document: Mapping[str, Any], path: Path | None = None) -> None:
        self.document = document
        self.path = path

    def at(self, pointer: str, depth: int = 0) -> tuple[Any, str]:
        """The node at ``pointer`` and its own pointer, following the ``$ref`` of every
        node on the way (the pointer returned is where the node really is)."""
        node: Any = self.document
        where = "#"
        for step, name in zip(
            pointer.removeprefix("#").split("/")[1:], steps(pointer), strict=True
        ):
            key: Any = name
            if isinstance(node, list) and key.isdigit() and int(key) < len(node):
                key = int(key)
            elif not isinstance(node, Mapping) or key not in node:
                raise self.error(where, f"{pointer} points nowhere")
            node, where = self.resolve(node[key], f"{where}/{step}", depth)
        return node, where

    def get(self, pointer: str) -> Any:
        """The node at ``pointer`` after its ``$ref``s, or None where there is none."""
        try:
            return self.at(pointer)[0]
        except SpecError:
            return None

    def resolve(self, node: Any, where: str = "#", depth: int = 0) -> tuple[Any, str]:
        """``node``, found at ``where``, or what its ``$ref`` points to, and its pointer."""
        if not isinstance(node, Mapping) or not isinstance(node.get("$ref"), str):
            return node, where
        target = node["$ref"]
        if not target.startswith("#"):
            raise self.error(where, f"$ref {target}: only references inside the file")
        if depth >= _MAX_REFERENCES:
            raise self.error(where, f"$ref {target}: references that never end")
        return self.at(target, depth + 1)

    def error(self, pointer: str, reason: str) -> SpecError:
        """A :class:`SpecError` for the node at ``pointer``: the file, where, why."""
        return SpecError(f"{self.path or 'the spec'}: {pointer}: {reason}")
