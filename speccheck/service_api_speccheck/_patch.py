"""The patch: edits that add to the spec or widen it, never remove or narrow, applied to
``openapi.yaml`` itself.

ruamel.yaml's round trip keeps the comments, the order of keys, anchors and quotes; a
file it would not write back unchanged is refused rather than rewritten. An edit whose
key is already there changes nothing: applying a patch twice is applying it once.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from service_api_spec import unescape

from ._observation import SpecCheckError, replace

Edit = tuple[str, str, Any]
"""``(pointer, "add", value)``: the node at the JSON ``pointer`` becomes ``value`` unless
it is there (the mappings missing on the way are made); ``(pointer, "widen", options)``:
the schema at ``pointer`` also accepts each schema of ``options``: its ``type`` list
grown where they are plain types (a plain ``string`` also drops its ``format``), else
an ``anyOf`` of what it was and of them."""

# Kept on a schema whose other keywords move into the first option of an anyOf.
ANNOTATIONS = {"description", "title", "examples", "example", "default", "deprecated"}


def _widen(node: CommentedMap, options: list[dict[str, Any]]) -> None:
    plain = all(set(option) == {"type"} for option in options)
    if plain and "type" in node and not {"$ref", "anyOf", "oneOf"} & set(node):
        if isinstance(node["type"], str):
            node["type"] = [node["type"]]
        node["type"] += [o["type"] for o in options if o["type"] not in node["type"]]
        if {"type": "string"} in options:
            node.pop("format", None)
        if "null" in node["type"] and None not in node.get("enum", [None]):
            node["enum"].append(None)  # else a null is still refused
    elif "anyOf" in node:
        node["anyOf"] += options
    else:
        moved = [k for k in node if k not in ANNOTATIONS and not k.startswith("x-")]
        node["anyOf"] = [{k: node.pop(k) for k in moved}, *options]


def apply(document: CommentedMap, pointer: str, action: str, value: Any) -> None:
    """Apply the edit ``(pointer, action, value)`` to ``document``, read by ruamel.yaml.

    Example::

        apply(document, "#/components/schemas/Shipment/properties/status", "add",
              {"type": "string"})
    """
    *path, key = [unescape(s) for s in pointer.split("/")]
    node: Any = document
    for step in path[1:]:
        node = (
            node[int(step)]
            if isinstance(node, list)
            else node.setdefault(step, CommentedMap())
        )
    if action == "widen":
        _widen(node[key], value)
    elif key not in node:
        # x-observed beside the x-assumed it marks, anything else last
        keys = list(node)
        at = len(keys)
        if key == "x-observed" and "x-assumed" in keys:
            at = keys.index("x-assumed") + 1
        node.insert(at, key, value)


def _dumped(yaml: YAML, document: Any) -> str:
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()


def write_patch(path: Path, original: bytes, edits: Sequence[Edit]) -> int:
    """Apply ``edits`` to the spec file at ``path``, whole or not at all; refused with a
    :class:`SpecCheckError` if the file no longer holds the ``original`` bytes it held
    when the check started. Returns the number of edits.

    Example::

        write_patch(Path("openapi.yaml"), report.original, report.edits)
    """
    data = path.read_bytes()
    if data != original:
        raise SpecCheckError(f"{path} changed since the check started: check again")
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
        apply(document, *edit)
    replace(path, _dumped(yaml, document))
    return len(edits)
