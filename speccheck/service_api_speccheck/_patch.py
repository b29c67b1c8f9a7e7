"""The patch: edits that add to the spec or widen it, never remove or narrow, applied to
``openapi.yaml`` itself.

ruamel.yaml's round trip keeps the comments, the order of keys, anchors and quotes; what
is added takes the blank lines that closed the mapping it is added to, so the layout
around it stays as it was. An edit whose key is already there changes nothing: applying
a patch twice is applying it once.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from ._observation import SpecCheckError

Edit = tuple[str, str, Any, Any]
"""``("add", pointer, key, value)``: the mapping at ``pointer`` (made if missing) gets
``key`` unless it has it. ``("widen", pointer, options, drop_format)``: the schema at
``pointer`` also accepts each schema of ``options`` (its ``type`` list grown, or an
``anyOf``), and loses its ``format`` if ``drop_format``."""

# Kept on a schema whose other keywords move into the first option of an anyOf.
ANNOTATIONS = {"description", "title", "examples", "example", "default", "deprecated"}
# What YAML reads as a string when written without quotes; others are written in double
# quotes, as the spec writes them (YAML 1.1 reads the words as booleans or null).
_PLAIN = re.compile(r"[A-Za-z$][A-Za-z0-9_.+/-]*")
_WORDS = {"null", "true", "false", "yes", "no", "on", "off", "y", "n"}


def digest(data: bytes) -> str:
    """The fingerprint of a spec file's bytes: a file changed since has another one."""
    return hashlib.sha256(data).hexdigest()


def _node(document: CommentedMap, pointer: str) -> Any:
    """The node at ``pointer`` in ``document``, following no ``$ref``; the mappings
    missing on the way are made."""
    node: Any = document
    for step in pointer.split("/")[1:]:
        key: Any = step.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            key = int(key)
        elif key not in node:
            _append(node, key, CommentedMap())
        node = node[key]
    return node


def _closing(node: Any) -> list[Any]:
    """ruamel.yaml's comments of the last line written in ``node``, nested or not: the
    third is the blank lines and comments that follow it."""
    while isinstance(node, CommentedMap) and node:
        key = list(node)[-1]
        if not isinstance(node[key], CommentedMap) or not node[key]:
            return node.ca.items.setdefault(key, [None] * 4)  # type: ignore[no-any-return]
        node = node[key]
    return [None] * 4


def _append(node: CommentedMap, key: Any, value: Any) -> None:
    """Add ``key`` (``x-observed`` right after ``x-assumed``, another last), taking the
    lines that followed the mapping's last one when it comes last."""
    keys = list(node)
    if key == "x-observed" and "x-assumed" in keys[:-1]:
        node.insert(keys.index("x-assumed") + 1, key, value)
        return
    before = _closing(node)
    after = before[2]
    before[2] = None
    node.insert(len(keys), key, value)
    _closing(node)[2] = after


def _yaml(value: Any) -> Any:
    """``value`` as ruamel.yaml writes it like the spec: lists of words in flow style
    (``[string, "null"]``), strings quoted (double) only where YAML needs it."""
    if isinstance(value, Mapping):
        return CommentedMap({_yaml(key): _yaml(item) for key, item in value.items()})
    if isinstance(value, list):
        seq = CommentedSeq(_yaml(item) for item in value)
        if all(isinstance(item, str) for item in value):
            seq.fa.set_flow_style()
        return seq
    if isinstance(value, str) and (value in _WORDS or not _PLAIN.fullmatch(value)):
        return DoubleQuotedScalarString(value)
    return value


def apply(document: CommentedMap, edit: Edit) -> None:
    """Apply ``edit`` to ``document``, read by ruamel.yaml.

    Example::

        apply(document, ("add", "#/components/schemas/Shipment/properties", "status",
                         {"type": "string"}))
    """
    kind, pointer, key, value = edit
    node = _node(document, pointer)
    if kind == "add":
        if key not in node:
            _append(node, _yaml(key), _yaml(value))
        return
    options: list[dict[str, Any]] = key
    if value:
        node.pop("format", None)
    types = node.get("type", [])
    types = [types] if isinstance(types, str) else list(types)
    scalars = all(set(option) == {"type"} for option in options)
    if types and scalars and not {"$ref", "anyOf", "oneOf"} & set(node):
        node["type"] = _yaml(
            types + [o["type"] for o in options if o["type"] not in types]
        )
        if "null" in node["type"] and None not in node.get("enum", [None]):
            node["enum"].append(None)  # else a null is still refused
    elif "anyOf" in node:
        node["anyOf"].extend(_yaml(options))
    elif options:
        moved = [k for k in node if k not in ANNOTATIONS and not k.startswith("x-")]
        _append(node, "anyOf", _yaml([{k: node.pop(k) for k in moved}, *options]))


def _dumped(yaml: YAML, document: Any) -> str:
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()


def write_patch(path: Path, fingerprint: str, edits: Iterable[Edit]) -> int:
    """Apply ``edits`` to the spec file at ``path``, whole or not at all; refused with a
    :class:`SpecCheckError` if the file no longer has the ``fingerprint`` it had when the
    check started. Returns the number of edits.

    Example::

        write_patch(Path("openapi.yaml"), report.fingerprint, report.edits)
    """
    data = path.read_bytes()
    if digest(data) != fingerprint:
        raise SpecCheckError(f"{path} changed since the check started: check again")
    edits = list(edits)
    if not edits:
        return 0
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a long line that was not folded
    # A sequence's dash under its key, or indented by two: the layout written back as is.
    for offset in (0, 2):
        yaml.indent(mapping=2, sequence=offset + 2, offset=offset)
        document = yaml.load(data)
        if _dumped(yaml, document) == data.decode():
            break
    else:
        raise SpecCheckError(
            f"{path}: ruamel.yaml cannot write it back unchanged (its layout): "
            "apply the report by hand"
        )
    for edit in edits:
        apply(document, edit)
    with tempfile.NamedTemporaryFile(
        "w", dir=path.parent, prefix=f".{path.name}.", delete=False, encoding="utf-8"
    ) as temporary:
        temporary.write(_dumped(yaml, document))
    os.replace(temporary.name, path)
    return len(edits)
