"""The patch on any layout: ``openapi.yaml`` as it is, re-dumped by PyYAML (folded
scalars, block lists), as JSON, with CRLF, in flow style on lines of many thousand
characters, and with aliases followed by comments. Edits of every action are drawn from
the spec's own document (never a list of its shapes); each layout must come out holding
exactly the edited document, changed only at the edited places, and a second application
must change no byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from test_speccheck_units import SPEC

from service_api_spec import escape, unescape
from service_api_speccheck import SpecCheckError, _patch
from service_api_speccheck._layout import LayoutError, Node, load, parse, same
from service_api_speccheck._patch import Edit, apply, patch_text, write_patch

ROOT = Path(__file__).resolve().parents[2]
ORIGINAL = (ROOT / "openapi.yaml").read_text("utf-8")
DOCUMENT = load(ORIGINAL)


def _shared(document: Any) -> Any:
    """``document`` with the first two object properties of each schema one object, so
    that PyYAML writes an anchor and an alias."""
    for schema in document["components"]["schemas"].values():
        objects = [
            name
            for name, p in schema.get("properties", {}).items()
            if isinstance(p, dict) and "type" in p
        ]
        if len(objects) >= 2:
            schema["properties"][objects[1]] = schema["properties"][objects[0]]
    return document


def _aliased() -> str:
    text = yaml.dump(_shared(load(ORIGINAL)), sort_keys=False)
    assert "*id" in text  # the layout holds aliases
    return re.sub(r"(: \*id[0-9]+)$", r"\1  # the same as above", text, flags=re.M)


LAYOUTS: dict[str, Callable[[], str]] = {
    "as is": lambda: ORIGINAL,
    "PyYAML": lambda: yaml.dump(DOCUMENT),
    "JSON": lambda: json.dumps(DOCUMENT, indent=2) + "\n",
    "CRLF": lambda: ORIGINAL.replace("\n", "\r\n"),
    "flow leaves": lambda: yaml.dump(DOCUMENT, default_flow_style=None, width=60),
    "JSON on one line": lambda: json.dumps(DOCUMENT),
    "all flow": lambda: yaml.dump(DOCUMENT, default_flow_style=True),
    "long lines": lambda: re.sub(
        r"(x-assumed: [^\n]*)", lambda m: m[1] + " and so on" * 500, ORIGINAL
    ),
    "aliases": _aliased,
}


def _walk(node: Any, pointer: str = "#") -> Iterator[tuple[str, Any]]:
    yield pointer, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _walk(value, f"{pointer}/{escape(str(key))}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, f"{pointer}/{index}")


def candidate_edits(document: Any) -> list[Edit]:
    """Edits of every action at places the document has: a property added to each object
    schema, each plain type widened, each reference made nullable, the first required
    name of each list dropped, each maximum lowered, each response's schema set to a
    reference, an x-observed beside each x-assumed."""
    first = next(iter(document["components"]["schemas"]))
    edits: list[Edit] = []
    for pointer, node in _walk(document):
        if not isinstance(node, dict):
            continue
        if "x-assumed" in node and "x-observed" not in node:
            edits.append((f"{pointer}/x-observed", "add", "2026-01-05"))
        if isinstance(node.get("properties"), dict):
            edits.append((f"{pointer}/properties/seenOnce", "add", {"type": "string"}))
        property = pointer.rpartition("/")[0].endswith("/properties")
        if property and "type" in node:
            edits.append((pointer, "widen", [{"type": "integer"}, {"type": "null"}]))
        if property and "$ref" in node:
            edits.append((pointer, "widen", [{"type": "null"}]))
        if node.get("required") and isinstance(node["required"], list):
            edits.append((f"{pointer}/required", "unrequire", node["required"][0]))
        if isinstance(node.get("maximum"), int):
            edits.append((f"{pointer}/maximum", "set", node["maximum"] - 1))
        if isinstance(node.get("schema"), dict) and "/content/" in pointer:
            ref = {"$ref": f"#/components/schemas/{first}"}
            edits.append((f"{pointer}/schema", "set", ref))
    return edits


EDITS = candidate_edits(DOCUMENT)


def _apart(edits: list[Edit]) -> list[Edit]:
    """The edits none of which is at or inside another's place (a widened schema's keys
    move into an anyOf: an edit below it would then be at another place)."""
    kept: list[Edit] = []
    for edit in edits:
        place = f"{edit[0]}/"
        if all(
            not place.startswith(f"{e[0]}/") and not f"{e[0]}/".startswith(place)
            for e in kept
        ):
            kept.append(edit)
    return kept


def expected(text: str, edits: list[Edit]) -> Any:
    """The document of ``text`` with ``edits`` applied to it as a plain document."""
    document = load(text)
    for edit in edits:
        apply(document, *edit)
    return document


def _spans(text: str, pointers: list[str]) -> list[tuple[int, int]]:
    """The lines (first, last) of the mapping each pointer's place is in, or of its
    nearest ancestor the text has; through an alias, those of the alias and of the
    node it names (which hands its anchor over)."""
    root, aliases = parse(text)
    anchored = {n.anchor: n for n in _nodes(root) if n.anchor}
    nodes = []
    for pointer in pointers:
        node = root
        for step in pointer.split("/")[1:-1]:
            step = unescape(step)
            if node.kind == "alias":
                nodes.append(anchored[node.name])
                break
            first_alias = aliases.get(node.anchor or "", [])[:1]
            if first_alias:  # the anchor leaves node for the alias
                nodes += [node, *first_alias]
            if node.kind == "map":
                keys = [text[k.start : k.end].strip("'\"") for k in node.children[::2]]
                if step not in keys:
                    break
                node = node.children[2 * keys.index(step) + 1]
            elif node.kind == "seq" and step.isdigit():
                node = node.children[int(step)]
            else:
                break
        nodes += [node, *aliases.get(node.anchor or "", [])[:1]]
    return [(text.count("\n", 0, n.start), text.count("\n", 0, n.end)) for n in nodes]


def _nodes(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from _nodes(child)


def assert_patched(text: str, edits: list[Edit]) -> str:
    """Apply ``edits`` to ``text`` and check the result: the edited document, changes
    only at the edited places, and a second application that changes no byte."""
    result = patch_text(text, edits)
    assert same(load(result), expected(text, edits))
    before = text.splitlines(keepends=True)
    after = result.splitlines(keepends=True)
    spans = _spans(text, [pointer for pointer, _, _ in edits])
    # every line outside the edited places is still there, in its order, and what
    # comes before the first place and after the last is the same bytes
    at = 0
    for number, line in enumerate(before):
        if any(first <= number <= last for first, last in spans):
            continue
        assert line in after[at:], f"line {number + 1} changed outside the places"
        at = after.index(line, at) + 1
    first = min([first for first, _ in spans], default=len(before))
    last = max([last for _, last in spans], default=len(before))
    assert after[:first] == before[:first]
    tail = len(before) - last - 1
    assert after[len(after) - tail :] == before[last + 1 :]
    assert patch_text(result, edits) == result
    return result


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_action_on_every_layout_changes_only_its_places(layout: str) -> None:
    text = LAYOUTS[layout]()
    edits = _apart(EDITS)
    actions = {action for _, action, _ in edits}
    assert actions == {"add", "widen", "unrequire", "set"}
    result = assert_patched(text, edits)
    if layout == "JSON":
        json.loads(result)
    if layout == "CRLF":
        assert "\n" not in result.replace("\r\n", "")


@settings(max_examples=25, deadline=None)
@given(
    layout=st.sampled_from(sorted(LAYOUTS)),
    edits=st.lists(st.sampled_from(EDITS), min_size=1, max_size=8),
)
def test_drawn_edits_on_drawn_layouts(layout: str, edits: list[Edit]) -> None:
    assert_patched(LAYOUTS[layout](), _apart(edits))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "openapi.yaml"
    path.write_bytes(text.encode())
    return path


SMALL = SPEC  # a spec with an anchor, an alias, comments and blank lines between blocks


def test_a_mark_sits_beside_its_guess_before_the_blank_line_and_quotes_follow_the_file(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path, SMALL)
    edits = [
        ("#/components/schemas/Thing/properties/status", "add", {"type": "string"}),
        ("#/components/schemas/Other/properties/at", "add", {"format": "date"}),
        ("#/paths/~1things/get/responses/404", "add", {"$ref": "#/x/X"}),
        ("#/components/schemas/Thing/properties/name", "widen", [{"type": "integer"}]),
        ("#/paths/~1things/get/responses/200/x-observed", "add", "2026-01-05"),
    ]
    assert write_patch(path, SMALL.encode(), edits) == 5
    written = path.read_text("utf-8")
    assert written == SMALL.replace(
        "          x-assumed: A guess.\n\n",
        '          x-assumed: A guess.\n          x-observed: "2026-01-05"\n'
        '        "404":\n          $ref: "#/x/X"\n\n',
    ).replace(
        '          type: [string, "null"]\n          x-assumed: Named somewhere.\n\n',
        '          type: [string, "null", integer]\n          x-assumed: Named somewhere.\n'
        "        status:\n          type: string\n\n",
    ).replace(
        "    Other:\n      type: object\n",
        "    Other:\n      type: object\n      properties:\n        at:\n"
        "          format: date\n",
    )
    before = path.stat().st_mtime_ns
    assert write_patch(path, written.encode(), edits) == 5
    assert path.read_text("utf-8") == written  # applied twice: as once
    assert path.stat().st_mtime_ns == before  # and not written again


def test_nothing_goes_between_a_comment_and_what_it_introduces() -> None:
    text = (
        "a:\n  b: 1\n  # introduces c\n  c:\n    d: 2\n\n    # introduces e\n  e: 3\n"
    )
    edits = [("#/a/b2", "add", 1), ("#/a/c/d2", "add", 1), ("#/a/z", "add", 1)]
    result = patch_text(text, edits)
    assert result == (
        "a:\n  b: 1\n  # introduces c\n  c:\n    d: 2\n    d2: 1\n\n    # introduces e\n"
        "  e: 3\n  b2: 1\n  z: 1\n"
    )
    # An x-observed follows its x-assumed, whatever the order of the other keys.
    marked = patch_text(
        "s:\n  x-assumed: a guess\n  # the type\n  type: string\n",
        [("#/s/x-observed", "add", "2026-01-05")],
    )
    assert marked == (
        "s:\n  x-assumed: a guess\n  x-observed: '2026-01-05'\n  # the type\n"
        "  type: string\n"
    )


def test_new_type_lists_are_written_as_the_file_writes_its_lists() -> None:
    widen = [("#/s/properties/a", "widen", [{"type": "null"}])]
    flow = "s:\n  properties:\n    a:\n      type: string\n    b:\n      type: [string, 'null']\n"
    assert "      type: [string, 'null']\n    b:" in patch_text(flow, widen)
    block = flow.replace("[string, 'null']", "\n      - string\n      - 'null'")
    assert "      type:\n      - string\n      - 'null'\n    b:" in patch_text(
        block, widen
    )
    flowing = "{s: {properties: {a: {type: string}, b: {type: [string, 'null']}}}}\n"
    assert patch_text(flowing, widen) == flowing.replace(
        "{type: string}", "{type: [string, 'null']}"
    )


def test_an_edit_through_an_alias_reaches_only_its_own_place() -> None:
    text = (
        "properties:\n"
        "  battery: &percent\n    type: integer\n    maximum: 100\n"
        "  humidity: *percent  # the same scale\n"
        "  charge: *percent\n"
    )
    widened = patch_text(text, [("#/properties/battery", "widen", [{"type": "null"}])])
    document = load(widened)["properties"]
    assert document["battery"]["type"] == ["integer", "null"]
    assert (
        document["humidity"]
        == document["charge"]
        == {"type": "integer", "maximum": 100}
    )
    assert widened.endswith("  charge: *percent\n")  # the alias is kept elsewhere
    lowered = patch_text(text, [("#/properties/humidity/maximum", "set", 50)])
    document = load(lowered)["properties"]
    assert document["humidity"]["maximum"] == 50
    assert (
        document["battery"] == document["charge"] == {"type": "integer", "maximum": 100}
    )
    assert lowered.startswith("properties:\n  battery: &percent\n")  # untouched
    assert "# the same scale" in lowered


def test_unrequire_and_set_are_idempotent_and_an_emptied_list_goes() -> None:
    text = "s:\n  required:\n    - a\n    - b\n  properties:\n    a: {maximum: 9}\n"
    edits = [
        ("#/s/required", "unrequire", "a"),
        ("#/s/required", "unrequire", "b"),
        ("#/s/properties/a/maximum", "set", 5),
        ("#/s/properties/b", "set", {"$ref": "#/c/B"}),
    ]
    result = patch_text(text, edits)
    assert result == (
        "s:\n  properties:\n    a: {maximum: 5}\n    b:\n      $ref: '#/c/B'\n"
    )
    assert patch_text(result, edits) == result
    assert patch_text(result, [("#/s/required", "unrequire", "a")]) == result


def test_an_edit_with_no_place_or_no_action_is_refused_by_name(tmp_path: Path) -> None:
    path = _write(tmp_path, SMALL)
    with pytest.raises(SpecCheckError, match="changed since the check started"):
        write_patch(path, b"before", [("#/a", "add", 1)])
    with pytest.raises(SpecCheckError, match="#/nowhere/at/all: no such place"):
        write_patch(path, SMALL.encode(), [("#/nowhere/at/all", "widen", [])])
    with pytest.raises(SpecCheckError, match="no edit 'remove'"):
        write_patch(path, SMALL.encode(), [("#/info", "remove", None)])
    with pytest.raises(SpecCheckError, match="'#': an edit's place is inside"):
        write_patch(path, SMALL.encode(), [("#", "set", {})])
    with pytest.raises(SpecCheckError, match="#/info/title/x: no such place"):
        write_patch(path, SMALL.encode(), [("#/info/title/x", "add", 1)])
    # nothing required there (no list, or no such place): nothing to unrequire
    same_text = [("#/info/title", "unrequire", "t"), ("#/no/where", "unrequire", "a")]
    assert write_patch(path, SMALL.encode(), same_text) == 2
    assert path.read_text("utf-8") == SMALL


def test_a_folded_scalar_and_a_line_over_4096_characters_are_no_reason_to_refuse() -> (
    None
):
    long = "x" * 5000
    text = (
        f"info:\n  title: a long title\n    folded on two lines\n  summary: {long}\n"
        "  description: >\n    folded\n    text\n"
    )
    result = patch_text(text, [("#/info/x-observed", "add", "2026-01-05")])
    assert result == text + "  x-observed: '2026-01-05'\n"


def test_a_merge_key_and_items_sharing_a_line_are_written_whole_not_refused() -> None:
    merged = "base: &b {a: 1, z: 0}\nx:\n  <<: *b\n  c: 2\n"
    result = patch_text(merged, [("#/x/a", "set", 5)])
    assert result.startswith("base: &b {a: 1, z: 0}\nx:\n")  # the base untouched
    assert load(result) == {"base": {"a": 1, "z": 0}, "x": {"a": 5, "z": 0, "c": 2}}
    nested = "s:\n- - a\n  - b\n- c\n"
    result = patch_text(nested, [("#/s/0", "unrequire", "a"), ("#/s/0", "set", ["b"])])
    assert load(result) == {"s": [["b"], "c"]}
    assert result.endswith("- c\n")


def test_a_change_that_cannot_be_placed_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, SMALL)

    def unplaceable(text: str, new: Any, old: Any = None) -> str:
        raise LayoutError("two changes meet at line 3")

    monkeypatch.setattr(_patch, "splice_document", unplaceable)
    edit = ("#/components/schemas/Other/x-observed", "add", "2026-01-05")
    with pytest.raises(SpecCheckError) as caught:
        write_patch(path, SMALL.encode(), [edit])
    assert str(caught.value) == (
        f"{path}: add #/components/schemas/Other/x-observed cannot be placed "
        "(two changes meet at line 3)"
    )
    assert path.read_text("utf-8") == SMALL


def test_the_layouts_are_what_they_claim() -> None:
    assert max(map(len, LAYOUTS["long lines"]().splitlines())) > 4096
    assert max(map(len, LAYOUTS["JSON on one line"]().splitlines())) > 4096
    assert re.search(r"\n {4,}[^ -].*\n {6,}\S", LAYOUTS["PyYAML"]())  # folded
    assert "\r\n" in LAYOUTS["CRLF"]()
    assert re.search(r": \*id[0-9]+  # ", LAYOUTS["aliases"]())


def test_a_flow_value_and_the_copy_of_a_flow_anchor_stay_in_flow_style() -> None:
    text = (
        "properties:\n"
        "  battery: &percent {type: integer, maximum: 100}\n"
        "  humidity: *percent  # the same scale\n"
        "  charge: *percent\n"
    )
    widened = patch_text(text, [("#/properties/battery", "widen", [{"type": "null"}])])
    assert widened == (
        "properties:\n"
        "  battery: {type: [integer, 'null'], maximum: 100}\n"
        "  humidity: &percent {type: integer, maximum: 100}  # the same scale\n"
        "  charge: *percent\n"
    )
    lowered = patch_text(text, [("#/properties/charge/maximum", "set", 50)])
    assert lowered.endswith("  charge: {type: integer, maximum: 50}\n")
