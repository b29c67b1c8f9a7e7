"""The patch on drawn documents: nested mappings and lists of drawn scalars (words,
numbers, booleans, nulls, text over lines), some shared (an anchor and an alias),
written in a drawn layout (PyYAML's block, flow leaves or all flow, indented by 4 or
lists indented, JSON indented or on one line, CRLF), changed by drawn edits of every
action. Each result holds exactly the edited document, changes only the edited places,
and a second application changes no byte.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from test_speccheck_patch import _apart, _walk, assert_patched

from service_api_speccheck._patch import Edit


class _Indented(yaml.SafeDumper):
    """Writes a list under its key indented (`key:\n  - a`), as many editors do."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


KEYS = st.sampled_from(
    ["a", "b", "type", "x-assumed", "x-observed", "200", "a b", "#c"]
)
SCALARS = st.one_of(
    st.integers(-5, 300),
    st.booleans(),
    st.none(),
    st.text(alphabet="ab :#-'\"\n{}[],é", max_size=12),
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=4),
        st.dictionaries(KEYS, inner, min_size=1, max_size=4),
    ),
    max_leaves=20,
).map(lambda tree: {"root": tree, "required": ["a", "b", "c"]})
# one tree twice: PyYAML writes an anchor and an alias
SHARING = st.builds(lambda d: {**d, "again": d["root"]}, DOCUMENTS)

WRITERS: dict[str, Callable[[Any], str]] = {
    "block": lambda d: yaml.dump(d, sort_keys=False, allow_unicode=True),
    "flow leaves": lambda d: yaml.dump(d, default_flow_style=None, width=30),
    "all flow": lambda d: yaml.dump(d, default_flow_style=True),
    "JSON": lambda d: json.dumps(d, indent=2),
    "JSON on one line": lambda d: json.dumps(d) + "\n",
    "CRLF": lambda d: yaml.dump(d, width=20).replace("\n", "\r\n"),
    "indented by 4": lambda d: yaml.dump(d, indent=4, width=40),
    "lists indented": lambda d: yaml.dump(d, Dumper=_Indented, width=40),
}


@st.composite
def edits(draw: st.DrawFn, document: Any) -> list[Edit]:
    """Edits at places ``document`` has: a value set, a key added, a name unrequired,
    a schema widened."""
    places = [(p, node) for p, node in _walk(document) if p != "#"]
    drawn: list[Edit] = []
    for _ in range(draw(st.integers(1, 4))):
        pointer, node = draw(st.sampled_from(places))
        action = draw(st.sampled_from(["set", "add", "unrequire", "widen"]))
        if action == "set":
            drawn.append((pointer, "set", draw(DOCUMENTS)["root"]))
        elif action == "add" and isinstance(node, dict):
            drawn.append((f"{pointer}/{draw(KEYS)}", "add", draw(SCALARS)))
        elif action == "unrequire":
            drawn.append(("#/required", "unrequire", draw(st.sampled_from("abcd"))))
        elif action == "widen" and isinstance(node, dict):
            drawn.append((pointer, "widen", [{"type": "null"}]))
    return drawn


@settings(max_examples=200, deadline=None)
@given(
    document=DOCUMENTS | SHARING,
    writer=st.sampled_from(sorted(WRITERS)),
    data=st.data(),
)
def test_drawn_edits_of_drawn_documents_in_drawn_layouts(
    document: Any, writer: str, data: st.DataObject
) -> None:
    drawn = _apart(data.draw(edits(document)))
    assert_patched(WRITERS[writer](document), drawn)
