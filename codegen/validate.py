"""Is the spec valid OpenAPI 3? openapi-spec-validator says, and this module says where.

A spec that is not valid fails generation with one line: the file, the line of the
failing node (from the YAML parser's marks: ``yaml.compose`` keeps them, the validator's
path leads to the node), where it is as a JSON pointer, and the rule broken. A valid spec
never fails here.

The document is the spec model's (:func:`service_api_spec.read_document`): the file is
read once; its YAML nodes are composed again only to name the line of an error.

Example::

    check_spec(read_document(Path("openapi.yaml")))  # InvalidSpec: openapi.yaml:12: ...
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml
from jsonschema.exceptions import (  # type: ignore[import-untyped]
    ValidationError,
    best_match,
)
from jsonschema_path import SchemaPath
from openapi_spec_validator.shortcuts import get_validator_cls
from openapi_spec_validator.validation.exceptions import ValidatorDetectError
from openapi_spec_validator.validation.validators import SpecValidator
from referencing.exceptions import Unresolvable

from service_api_spec import SpecDocument, escape, steps

__all__ = ["InvalidSpec", "check_spec"]

# References deeper than this, while a path is followed in the YAML nodes, are a loop.
_MAX_REFERENCES = 32


class InvalidSpec(ValueError):
    """The spec is not valid OpenAPI 3: the message names the file, the line and the
    rule."""


def check_spec(document: SpecDocument) -> None:
    """Raise :class:`InvalidSpec` for the first error openapi-spec-validator finds in
    ``document`` (the spec model's, read once: its file is parsed again, for the lines
    of its nodes, only to say where an error is).

    Example::

        check_spec(read_document(Path("openapi.yaml")))
    """
    path = document.path or Path("openapi.yaml")
    tree = _Tree(path)
    version = str(document.document.get("openapi", ""))
    if not version.startswith("3."):
        line = tree.line(["openapi"]) if "openapi" in document.document else 1
        raise InvalidSpec(
            f"{path}:{line}: not an OpenAPI 3 document: the field openapi must be 3.0.x, "
            f"3.1.x or 3.2.x (found {version or 'none'})"
        )
    try:
        validator = _located(get_validator_cls(document.document))(
            SchemaPath.from_dict(dict(document.document))
        )
        error = next(iter(validator.iter_errors()), None)
    except ValidatorDetectError:
        raise InvalidSpec(
            f"{path}:1: OpenAPI {version} is not a version known"
        ) from None
    except Unresolvable as exc:
        target = str(getattr(exc, "ref", ""))
        reference = f"#{target}" if target.startswith("/") else target
        line = _reference_line(tree.root, reference)
        raise InvalidSpec(f"{path}:{line}: $ref {reference} points nowhere") from None
    if error is not None:
        raise InvalidSpec(_describe(path, tree, error))


class _Tree:
    """The YAML nodes of the file, with their lines: composed when first asked for."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._root: yaml.Node | None = None

    @property
    def root(self) -> yaml.Node:
        if self._root is None:
            text = self.path.read_text(encoding="utf-8")
            root = yaml.compose(text, Loader=yaml.SafeLoader)
            if root is None:  # the file changed since it was read
                raise InvalidSpec(f"{self.path}: not an OpenAPI document")
            self._root = root
        return self._root

    def line(self, where: Sequence[object]) -> int:
        return _line(self.root, where)


def _describe(path: Path, tree: _Tree, error: ValidationError) -> str:
    where = [*getattr(error, "location", ()), *error.absolute_path]
    line = tree.line(where)
    pointer = "#/" + "/".join(escape(str(step)) for step in where)
    # Of the reasons an "anyOf" failed, the one that goes deepest says the most.
    reason = best_match(error.context) if error.context else error
    # The keyword of the schema that failed ("enum", "required", ...), where it is known.
    keyword = reason.validator if isinstance(reason.validator, str) else None
    if keyword is None and reason.schema_path:
        keyword = str(reason.schema_path[-1])
    rule = f" (rule: {keyword})" if keyword else ""
    # Its first paragraph: the others repeat the schema and the instance at length.
    message = str(reason.message).split("\n\n")[0]
    return f"{path}:{line}: {pointer}: {message}{rule}"


def _located(cls: type[SpecValidator]) -> type[SpecValidator]:
    """``cls`` whose every keyword check marks the errors it finds with where it looked
    (``error.location``: the path from the top of the document), which the errors of the
    schema and operation checks do not say themselves."""

    def mark(base: type[Any]) -> type[Any]:
        def __call__(self: Any, *args: Any, **kwargs: Any) -> Iterator[ValidationError]:
            place = next((a.parts for a in args if isinstance(a, SchemaPath)), ())
            for error in base.__call__(self, *args, **kwargs):
                if not hasattr(error, "location"):
                    error.location = tuple(place)
                yield error

        return type(base.__name__, (base,), {"__call__": __call__})

    checks = {name: mark(check) for name, check in cls.keyword_validators.items()}
    return type(cls.__name__, (cls,), {"keyword_validators": checks})


def _line(tree: yaml.Node, steps: Sequence[object], depth: int = 0) -> int:
    """The line of the node at ``steps`` from ``tree`` (of the nearest node on the way
    that exists), following ``$ref``s inside the file."""
    node, line = tree, tree.start_mark.line + 1
    for index, step in enumerate(steps):
        found = _child(node, step)
        if found is None and isinstance(node, yaml.MappingNode):
            target = _reference(node)
            if target is not None and depth < _MAX_REFERENCES:
                return _line(tree, [*target, *steps[index:]], depth + 1)
        if found is None:
            return line
        node, line = found
    return line


def _child(node: yaml.Node, step: object) -> tuple[yaml.Node, int] | None:
    """The node under ``node`` at ``step`` and the line that names it, if there is one."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == str(step):
                return value, int(key.start_mark.line) + 1
    elif isinstance(node, yaml.SequenceNode):
        index = int(str(step)) if str(step).isdigit() else len(node.value)
        child = node.value[index] if index < len(node.value) else None
        return (child, int(child.start_mark.line) + 1) if child else None
    return None


def _reference(node: yaml.MappingNode) -> list[str] | None:
    """The steps of the local ``$ref`` of ``node``, if it has one."""
    for key, value in node.value:
        if key.value == "$ref" and str(value.value).startswith("#/"):
            return steps(str(value.value))
    return None


def _reference_line(tree: yaml.Node, reference: str) -> int:
    """The line of the first ``$ref: <reference>`` in the file (1 if none is found)."""
    pending, seen = [tree], set()
    while pending:
        node = pending.pop(0)
        if id(node) in seen:  # an alias of a node already looked at
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == "$ref" and value.value == reference:
                    return int(key.start_mark.line) + 1
                pending.append(value)
        elif isinstance(node, yaml.SequenceNode):
            pending.extend(node.value)
    return 1
