"""The patch: edits of the spec, applied to the text of ``openapi.yaml`` (or
``openapi.json``) itself.

An edit is first applied to the document (:func:`apply`); the text is then changed only
where the document changed (:mod:`._layout`): every other byte stays, whatever the
layout (folded scalars, flow or block style, long lines, comments, CRLF, JSON). An edit
that reaches a place through an alias changes a copy at that place, never what the alias
shares. Each action is idempotent: applying a patch twice is applying it once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from service_api_spec import steps

from ._layout import LayoutError, load, plain, same, splice_document
from ._observation import SpecCheckError
from ._write import SpecWriteError, replace

__all__ = ["Edit", "SpecWriteError", "apply", "patch_text", "write_patch"]

Edit = tuple[str, str, Any]
"""``(pointer, action, value)``, ``pointer`` a JSON pointer (``#/components/...``):

- ``"add"``: the node at ``pointer`` becomes ``value`` unless it is there (the mappings
  missing on the way are made); an ``x-observed`` goes beside its ``x-assumed``;
- ``"widen"``: the schema at ``pointer`` also accepts each schema of ``value``: its
  ``type`` list grown where they are plain types (a plain ``string`` also drops its
  ``format``), else an ``anyOf`` of what it was and of them;
- ``"unrequire"``: ``value``, a field name, leaves the ``required`` list at ``pointer``
  (a list left empty goes too);
- ``"set"``: the node at ``pointer`` becomes ``value`` (made if missing)."""

# Kept on a schema whose other keywords move into the first option of an anyOf.
ANNOTATIONS = {"description", "title", "examples", "example", "default", "deprecated"}


def _widen(
    node: dict[str, Any],
    options: list[dict[str, Any]],
) -> None:
    plain = all(set(option) == {"type"} for option in options)
    if plain and "type" in node and not {"$ref", "anyOf", "oneOf"} & set(node):
        types = node["type"] if isinstance(node["type"], list) else [node["type"]]
        new = [o["type"] for o in options if o["type"] not in types]
        if new:
            node["type"] = [*types, *new]
        if {"type": "string"} in options:
            node.pop("format", None)
        if "null" in node["type"] and None not in node.get("enum", [None]):
            node["enum"].append(None)  # else a null is still refused
    elif "anyOf" in node:
        node["anyOf"] += [o for o in options if o not in node["anyOf"]]
    else:
        moved = [k for k in node if k not in ANNOTATIONS and not k.startswith("x-")]
        node["anyOf"] = [{k: node.pop(k) for k in moved}, *options]


def _child(
    node: Any,
    step: str,
    make: bool,
) -> Any:
    """The child ``step`` of ``node``; a mapping made for it when ``make``."""
    if isinstance(node, list):
        if not step.isdigit() or int(step) >= len(node):
            raise KeyError(step)
        return node[int(step)]
    if not isinstance(node, dict):
        raise KeyError(step)
    key = next((k for k in node if str(k) == step), step)  # a YAML key 200 is "200"
    if make and key not in node:
        node[key] = {}
    return node[key]


ACTIONS = ("add", "widen", "unrequire", "set")


def apply(
    document: Any,
    pointer: str,
    action: str,
    value: Any,
) -> None:
    """Apply the edit ``(pointer, action, value)`` (see :data:`Edit`) to ``document``,
    a plain document (dicts and lists); :class:`SpecCheckError` for a place that is
    missing or an action that is none.

    Example::

        apply(document, "#/components/schemas/Shipment/properties/status", "add",
              {"type": "string"})
    """
    if action not in ACTIONS:
        raise SpecCheckError(f"{pointer}: no edit {action!r}")
    places = steps(pointer)
    if not places:
        raise SpecCheckError(f"{pointer!r}: an edit's place is inside the document")
    *path, key = places
    try:
        node = document
        for step in path:
            node = _child(node, step, action in ("add", "set"))
        if action == "widen":
            schema = _child(node, key, False)
            if not isinstance(schema, dict):
                raise KeyError(key)
            _widen(schema, value)
        elif isinstance(node, list):
            _put_item(node, key, action, value)
        elif isinstance(node, dict):
            _put(node, key, action, value)
        else:
            raise KeyError(key)  # a scalar has no places inside
    except KeyError:
        if action != "unrequire":  # nothing required there: nothing to do
            raise SpecCheckError(f"{pointer}: no such place in the spec") from None


def _put(
    node: dict[Any, Any],
    key: str,
    action: str,
    value: Any,
) -> None:
    if action == "add" and key not in node:
        keys = list(node)
        at = len(keys)
        if key == "x-observed" and "x-assumed" in keys:
            at = keys.index("x-assumed") + 1  # beside the guess it marks
        items = list(node.items())
        node.clear()
        node.update([*items[:at], (key, value), *items[at:]])
    elif action == "set" and (key not in node or not same(node[key], value)):
        node[key] = value
    elif action == "unrequire" and value in _names(node.get(key)):
        node[key] = [name for name in node[key] if name != value]
        if not node[key]:
            del node[key]


def _names(required: Any) -> list[Any]:
    """The names of a ``required`` list (none of anything else)."""
    if isinstance(required, list):
        return required
    return []


def _put_item(
    node: list[Any],
    key: str,
    action: str,
    value: Any,
) -> None:
    at = len(node) if key == "-" else int(key) if key.isdigit() else -1
    if at == len(node) and action != "unrequire":
        node.append(value)
    elif not 0 <= at < len(node):
        raise KeyError(key)
    elif action == "set":
        node[at] = value


def patch_text(
    text: str,
    edits: Sequence[Edit],
    name: str = "the spec",
) -> str:
    """``text``, a spec's YAML or JSON, with ``edits`` applied: only the places they
    change are written, every other byte kept; :class:`SpecCheckError` naming the
    edit that cannot be placed.

    Example::

        patch_text(Path("openapi.yaml").read_text(), report.edits)
    """
    try:
        document = load(text)
    except yaml.YAMLError as exc:
        raise SpecCheckError(f"{name}: not YAML ({exc})") from None
    new = plain(document)
    for edit in edits:
        apply(new, *edit)
    if same(new, document):
        return text
    with contextlib.suppress(LayoutError, yaml.YAMLError):
        written = splice_document(text, new, document)
        if same(load(written), new):
            return written
    # One edit at a time, to name the one that cannot be placed.
    for pointer, action, value in edits:
        new = plain(document)
        apply(new, pointer, action, value)
        if same(new, document):
            continue
        place = f"{name}: {action} {pointer}"
        try:
            text = splice_document(text, new, document)
            document = load(text)
        except (LayoutError, yaml.YAMLError) as exc:
            raise SpecCheckError(f"{place} cannot be placed ({exc})") from None
        if not same(document, new):
            raise SpecCheckError(f"{place} cannot be placed in the file's layout")
    return text


def write_patch(
    path: Path,
    original: bytes,
    edits: Sequence[Edit],
) -> int:
    """Apply ``edits`` to the spec file at ``path``, whole or not at all; refused with a
    :class:`SpecCheckError` if the file no longer holds the ``original`` bytes it held
    when the check started or an edit cannot be placed, :class:`SpecWriteError` if the
    file cannot be replaced (it is then as it was). The file keeps its mode and owner,
    and is not written when nothing changes. Returns the number of edits.

    Example::

        write_patch(Path("openapi.yaml"), report.original, report.edits)
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SpecWriteError(path, exc.strerror or str(exc)) from None
    if data != original:
        raise SpecCheckError(f"{path} changed since the check started: check again")
    if not edits:
        return 0
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SpecCheckError(f"{path}: not UTF-8") from None
    written = patch_text(text, edits, str(path))
    if written != text:
        replace(path, written)
    return len(edits)
