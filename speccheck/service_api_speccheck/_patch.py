"""The patch: edits that add to the spec or widen it, never remove or narrow, applied to
a plain document (to check the patched spec again) or to ``openapi.yaml`` itself.

In the file, ruamel.yaml's round trip keeps the comments, the order of keys, anchors and
quotes; what is added takes the blank lines that closed the mapping it is added to, so
the layout around it stays as it was. An edit whose key is already there changes
nothing: applying a patch twice is applying it once.
"""

from __future__ import annotations

import copy
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

from ._shapes import SpecCheckError

__all__ = ["Edit", "apply", "digest", "node_at", "write_patch"]

Edit = tuple[str, str, Any, Any]
"""``("add", pointer, key, value)``: the mapping at ``pointer`` (made if missing) gets
``key`` unless it has it. ``("widen", pointer, options, drop_format)``: the schema at
``pointer`` also accepts each schema of ``options`` (its ``type`` list grown, or an
``anyOf``), and loses its ``format`` if ``drop_format``."""

# Kept on a schema whose other keywords move into the first option of an anyOf.
ANNOTATIONS = frozenset(
    {"description", "title", "examples", "example", "default", "deprecated"}
)
_PLAIN = re.compile(r"[A-Za-z$][A-Za-z0-9_.+/-]*")
_WORDS = frozenset({"null", "true", "false", "yes", "no", "on", "off", "y", "n"})


def digest(data: bytes) -> str:
    """The fingerprint of a spec file's bytes: a file changed since has another one."""
    return hashlib.sha256(data).hexdigest()


def node_at(document: Any, pointer: str, *, create: bool = False) -> Any:
    """The node at ``pointer`` in ``document``, following no ``$ref``; with ``create``,
    the mappings missing on the way are made.

    Example::

        node_at(document, "#/components/schemas/Shipment/properties")
    """
    node = document
    for step in pointer.split("/")[1:]:
        key = step.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(key)]
            continue
        if create and key not in node:
            _append(node, key, CommentedMap() if isinstance(node, CommentedMap) else {})
        node = node[key]
    return node


def _last(node: Any) -> tuple[CommentedMap, Any] | None:
    """The mapping and key of the last scalar written in ``node``, nested or not."""
    while isinstance(node, CommentedMap) and node:
        key = list(node)[-1]
        if not isinstance(node[key], CommentedMap) or not node[key]:
            return node, key
        node = node[key]
    return None


def _append(node: Any, key: Any, value: Any) -> None:
    """Add ``key``: last (``x-observed`` right after ``x-assumed``), taking the blank
    lines and comments that followed the mapping's last line."""
    if not isinstance(node, CommentedMap):
        node[key] = value
        return
    keys = list(node)
    at = len(keys)
    if key == "x-observed" and "x-assumed" in keys:
        at = keys.index("x-assumed") + 1
    closing = _last(node) if at == len(keys) else None
    token = None
    if closing is not None and len(closing[0].ca.items.get(closing[1], ())) > 2:
        token = closing[0].ca.items[closing[1]][2]
        closing[0].ca.items[closing[1]][2] = None
    node.insert(at, key, value)
    closing = _last(node)
    if token is not None and closing is not None:
        closing[0].ca.items.setdefault(closing[1], [None] * 4)[2] = token


def _yaml(value: Any) -> Any:
    """``value`` as ruamel.yaml writes it like the spec: lists of words in flow style
    (``[string, "null"]``), strings quoted (double) only where YAML needs it."""
    if isinstance(value, Mapping):
        out = CommentedMap()
        for key, item in value.items():
            out[_yaml(key)] = _yaml(item)
        return out
    if isinstance(value, list):
        seq = CommentedSeq([_yaml(item) for item in value])
        if all(isinstance(item, str) for item in value):
            seq.fa.set_flow_style()
        return seq
    if isinstance(value, str) and (value in _WORDS or not _PLAIN.fullmatch(value)):
        return DoubleQuotedScalarString(value)
    return value


def apply(document: Any, edit: Edit, *, in_yaml: bool = False) -> None:
    """Apply ``edit`` to ``document`` (a ruamel.yaml one with ``in_yaml``).

    Example::

        apply(document, ("add", "#/components/schemas/Shipment/properties", "status",
                         {"type": "string"}))
    """
    kind, pointer, key, value = edit
    made = _yaml if in_yaml else copy.deepcopy
    node = node_at(document, pointer, create=kind == "add")
    if kind == "add":
        if key not in node:
            _append(node, made(key) if in_yaml else key, made(value))
        return
    options: list[dict[str, Any]] = key
    if value:
        node.pop("format", None)
    declared = node.get("type")
    types = [declared] if isinstance(declared, str) else list(declared or [])
    scalars = all(set(o) == {"type"} for o in options)
    if types and scalars and not {"$ref", "anyOf", "oneOf"} & set(node):
        node["type"] = made(
            types + [o["type"] for o in options if o["type"] not in types]
        )
        if any(o["type"] == "null" for o in options) and None not in node.get(
            "enum", [None]
        ):
            node["enum"].append(None)
        return
    if options and "anyOf" not in node:
        moved = {
            k: node.pop(k) for k in list(node) if k not in ANNOTATIONS and k[:2] != "x-"
        }
        _append(node, "anyOf", made([moved]))
    node.get("anyOf", []).extend(made(options))


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
    text = data.decode("utf-8")
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a long line that was not folded
    # The file's indents: of a mapping (its first indented line), of a sequence's dash
    # under its key (the first sequence of mappings, as "- name: x").
    mapping = re.search(r"^( +)\S", text, re.MULTILINE)
    dash = re.search(r"^( *)\S[^\n]*:\n( *)- ", text, re.MULTILINE)
    offset = len(dash[2]) - len(dash[1]) if dash else 0
    yaml.indent(
        mapping=len(mapping[1]) if mapping else 2, sequence=offset + 2, offset=offset
    )
    document = yaml.load(text)
    if _dumped(yaml, document) != text:
        raise SpecCheckError(
            f"{path}: ruamel.yaml cannot write it back unchanged (its layout): "
            "apply the report by hand"
        )
    for edit in edits:
        apply(document, edit, in_yaml=True)
    with tempfile.NamedTemporaryFile(
        "w", dir=path.parent, prefix=f".{path.name}.", delete=False, encoding="utf-8"
    ) as temporary:
        temporary.write(_dumped(yaml, document))
    os.replace(temporary.name, path)
    return len(edits)
