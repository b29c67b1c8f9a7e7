"""Changes written into the text of a YAML or JSON file itself, every other byte kept.

A round trip through a YAML library rewrites what it cannot reproduce (folded scalars,
long lines, CRLF, comments after aliases, JSON); this module never writes the document
back. It reads the file's events (each with its start and end in the text), compares the
document as it is with the document as it should be, and splices text only where they
differ: an entry inserted after the line that ends the entry before it (never after the
blank lines and comments that introduce what follows), an entry or item removed with its
lines, a value replaced in place. What it writes follows the file: its indentation, its
line ends, flow or block type lists, its quotes, JSON in a JSON file.

Aliases: a place reached through ``*name`` is changed in a copy of what the alias named,
written where the alias was; an anchored place that later aliases name hands its anchor
to the first of them (a copy of what it was) before it is changed, so that an edit
reaches only its own place.

Example::

    splice_document(text, new_document)  # the text of text's file, now new_document
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_WIDTH = 10**9  # a line written here is never folded


class LayoutError(ValueError):
    """A change that cannot be placed in the text: the message names where."""


@dataclass(eq=False)
class Node:
    """One node of the text: where it starts and ends, its kind and its children
    (a mapping's keys and values alternate)."""

    kind: Literal["scalar", "map", "seq", "alias"]
    start: int
    end: int = 0
    flow: bool = False
    anchor: str | None = None
    name: str = ""  # a scalar's value, an alias's anchor
    header: str = ""  # a scalar's first characters: a block scalar's indicators
    children: list[Node] = field(default_factory=list)

    def pairs(self) -> list[tuple[Node, Node]]:
        """A mapping's (key, value) nodes."""
        return list(zip(self.children[::2], self.children[1::2], strict=True))


def parse(text: str) -> tuple[Node, dict[str, list[Node]]]:
    """The root node of ``text`` and its alias nodes by anchor name."""
    stack: list[Node] = [Node("seq", 0)]
    aliases: dict[str, list[Node]] = {}
    for event in yaml.parse(text, Loader=_LOADER):
        start = event.start_mark.index if event.start_mark else 0
        end = event.end_mark.index if event.end_mark else len(text)
        if isinstance(event, yaml.AliasEvent):
            node = Node("alias", start, end, name=str(event.anchor))
            aliases.setdefault(node.name, []).append(node)
            stack[-1].children.append(node)
        elif isinstance(event, yaml.ScalarEvent):
            header = text[start : start + 8] if event.style in ("|", ">") else ""
            scalar = Node("scalar", start, end, anchor=event.anchor, header=header)
            scalar.name = event.value
            stack[-1].children.append(scalar)
        elif isinstance(event, yaml.CollectionStartEvent):
            kind: Literal["map", "seq"] = (
                "map" if isinstance(event, yaml.MappingStartEvent) else "seq"
            )
            node = Node(kind, start, flow=bool(event.flow_style), anchor=event.anchor)
            stack[-1].children.append(node)
            stack.append(node)
        elif isinstance(event, yaml.CollectionEndEvent):
            stack.pop().end = end
    if not stack[0].children:
        raise LayoutError("the file holds no document")
    return stack[0].children[0], aliases


def plain(value: Any) -> Any:
    """``value`` with every mapping and list its own: what an alias shares, copied."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same document (``1``, ``1.0`` and ``true`` are
    not)."""
    if type(a) is not type(b):  # key order aside
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    return bool(a == b)


def load(text: str) -> Any:
    """The document of ``text`` (YAML or JSON), aliases copied."""
    return plain(yaml.load(text, Loader=_LOADER))  # noqa: S506 -- a safe loader


class _Items(list[Any]):
    """A list written in block style whatever it holds: the ``- value`` of an item."""


class _Dumper(yaml.SafeDumper):
    """Writes new values the way the file writes its own (set per file)."""

    quote = "'"
    flow_leaves = True  # a list of scalars in flow style: [string, "null"]
    indented_lists = True  # a list under its key indented, not level with it

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, indentless and not self.indented_lists)

    def choose_scalar_style(self) -> str:
        style = str(super().choose_scalar_style() or "")
        # a single-quoted scalar can always be double-quoted; not the other way round
        return '"' if style == "'" and self.quote == '"' else style


def _represent_list(dumper: _Dumper, data: list[Any]) -> yaml.Node:
    flow = True if data and _leaves(data) and dumper.flow_leaves else None
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


def _represent_items(dumper: _Dumper, data: _Items) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=False)


def _represent_str(dumper: _Dumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data.strip("\n") else None  # a description stays readable
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(_Items, _represent_items)
_Dumper.add_representer(str, _represent_str)


def _leaves(data: list[Any]) -> bool:
    return not any(isinstance(item, dict | list) for item in data)


def _both(
    node: Node, kind: str, of: type[dict[Any, Any] | list[Any]], old: Any, new: Any
) -> bool:
    """Whether ``node`` is a ``kind`` whose ``old`` and ``new`` are both ``of``, one
    child (a key and a value) each (a merge key ``<<`` is not)."""
    if node.kind != kind or not isinstance(old, of) or not isinstance(new, of):
        return False
    if kind == "map" and any(k.name == "<<" for k in node.children[::2]):
        return False  # what it merges in is no entry of its own: written whole
    return len(node.children) == len(old) * (2 if kind == "map" else 1)


def _column(text: str, at: int) -> int:
    return at - (text.rfind("\n", 0, at) + 1)


def _removed(old: list[Any], new: list[Any]) -> list[int] | None:
    """The indexes of ``old`` whose removal leaves ``new``, or None."""
    gone = []
    at = 0
    for index, item in enumerate(old):
        if at < len(new) and same(item, new[at]):
            at += 1
        else:
            gone.append(index)
    return gone if at == len(new) else None


class _Round:
    """One reading of the text, and the splices that bring it closer to a document."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.root, self.aliases = parse(text)
        self.splices: list[tuple[int, int, str]] = []
        root = self.root
        self.json = bool(
            root.kind == "map"
            and root.flow
            and root.children
            and text[root.children[0].start] == '"'
        )
        self.json_indent: int | None = None
        if self.json and "\n" in text[root.start : root.children[0].start]:
            self.json_indent = _column(text, root.children[0].start)
        self._learn()

    def _learn(self) -> None:
        """The file's layout: indentation, quotes, flow or block lists of scalars."""
        steps: Counter[int] = Counter()
        lists: Counter[str] = Counter()
        quotes: Counter[str] = Counter()
        todo = [self.root]
        while todo:
            node = todo.pop()
            todo += node.children
            if node.kind == "scalar" and self.text[node.start] in "'\"":
                quotes[self.text[node.start]] += 1
            if node.kind != "map" or node.flow:
                continue
            for key, value in node.pairs():
                indent = _column(self.text, key.start)
                if value.kind == "map" and not value.flow and value.children:
                    steps[_column(self.text, value.children[0].start) - indent] += 1
                if value.kind != "seq" or not value.children:
                    continue
                if all(c.kind == "scalar" for c in value.children):
                    lists["flow" if value.flow else "block"] += 1
                if not value.flow:
                    dash = _column(self.text, self._dash(value.children[0]))
                    lists["indented" if dash > indent else "level"] += 1
        self.step = min(max(steps.most_common(1)[0][0], 1), 9) if steps else 2
        self.dumper: type[_Dumper] = type(
            "_FileDumper",
            (_Dumper,),
            {
                "quote": '"' if quotes["'"] < quotes['"'] else "'",
                "flow_leaves": lists["flow"] >= lists["block"],
                "indented_lists": lists["indented"] >= lists["level"],
            },
        )

    def result(self) -> str:
        """The text with the splices made; :class:`LayoutError` when two overlap."""
        out: list[str] = []
        at = 0
        for start, end, new in sorted(self.splices, key=lambda s: (s[0], s[1])):
            if start < at:
                raise LayoutError(f"two changes meet at line {self._line(start)}")
            out += [self.text[at:start], new.replace("\n", self.newline)]
            at = end
        return "".join([*out, self.text[at:]])

    # -- what is written -------------------------------------------------------------

    def _yaml(self, value: Any, flow: bool) -> str:
        out = yaml.dump(
            value,
            Dumper=self.dumper,
            default_flow_style=flow,
            sort_keys=False,
            allow_unicode=True,
            width=_WIDTH,
            indent=self.step,
        )
        return str(out).removesuffix("\n...\n").removesuffix("\n")

    @staticmethod
    def _indented(text: str, column: int) -> str:
        """``text`` with each line after the first moved right by ``column``."""
        pad = " " * column
        first, *rest = text.split("\n")
        return "\n".join([first, *(pad + line if line else line for line in rest)])

    def inline(self, value: Any, column: int | None) -> str:
        """``value`` where a flow collection's value goes, lines after the first
        (JSON's) at ``column``; on one line when ``column`` is None."""
        if self.json:
            indent = None if column is None else self.json_indent
            dumped = json.dumps(value, indent=indent, ensure_ascii=False)
            return self._indented(dumped, column or 0)
        return self._yaml([value], flow=True)[1:-1]  # in a flow context: `a,b` quoted

    def _block(self, value: Any) -> bool:
        """Whether ``value`` is written over lines of its own in a block collection."""
        if isinstance(value, list) and _leaves(value):
            return bool(value) and not self.dumper.flow_leaves
        return isinstance(value, dict | list) and bool(value)

    def entry(self, key: Any, value: Any, column: int, anchor: str = "") -> str:
        """``key: value`` in a block mapping whose keys start at ``column`` (``-
        value`` in a block sequence when ``key`` is None), ``anchor`` on the value."""
        if key is None:
            text = self._yaml(_Items([value]), flow=False)
            if anchor:
                gap = "\n  " if self._block(value) else " "
                text = f"- &{anchor}{gap}{text[2:]}"
        else:
            text = self._yaml({key: value}, flow=False)
            if anchor:
                head, _, rest = text.partition(":")
                text = f"{head}: &{anchor}{rest}"
        return self._indented(text, column)

    # -- where it is written ---------------------------------------------------------

    def _line(self, at: int) -> int:
        return self.text.count("\n", 0, at) + 1

    def _dash(self, item: Node) -> int:
        return self.text.rindex("-", 0, item.start)

    def content_end(self, node: Node) -> int:
        """Where ``node``'s own text ends: its last character (a block collection's
        last scalar's, not the blank lines and comments after it)."""
        while node.kind in ("map", "seq") and not node.flow and node.children:
            node = node.children[-1]
        end = node.end
        if "+" in node.header.split("\n")[0]:
            return end  # a kept block scalar: its trailing line ends are its value
        while end > node.start and self.text[end - 1] in " \t\r\n":
            end -= 1
        return end

    def line_after(self, at: int) -> int:
        """The start of the line after the one ``at`` is on."""
        if at and self.text[at - 1] == "\n":
            return at
        found = self.text.find("\n", at)
        return len(self.text) if found < 0 else found + 1

    def line_start(self, at: int) -> int | None:
        """The start of ``at``'s line if only spaces come before ``at`` on it."""
        start = self.text.rfind("\n", 0, at) + 1
        return start if not self.text[start:at].strip(" \t") else None

    def _add_lines(self, text: str, at: int) -> None:
        """Insert whole lines at ``at``, a line's start (or the end of the text)."""
        if at == len(self.text) and self.text and not self.text.endswith("\n"):
            self.splices.append((at, at, "\n" + text))
        else:
            self.splices.append((at, at, text + "\n"))

    # -- the walk ----------------------------------------------------------------------

    def walk(
        self, node: Node, old: Any, new: Any, parent: Node | None, key: Node | None
    ) -> bool:
        """Add the splices that turn ``node`` (``old``) into ``new``; False when an
        anchor had to move first (the text is to be read again)."""
        if same(old, new):
            return True
        if node.kind == "alias":
            self.write(node, new, parent, key)
            return True
        later = [
            a for a in self.aliases.get(node.anchor or "", []) if a.start > node.start
        ]
        if later:
            self.hand_over(node, old, later[0])
            return False
        if _both(node, "map", dict, old, new) and any(k in new for k in old):
            return self.walk_map(node, old, new)
        if _both(node, "seq", list, old, new) and old and new:
            return self.walk_seq(node, old, new, parent, key)
        self.write(node, new, parent, key)
        return True

    def walk_map(self, node: Node, old: dict[Any, Any], new: dict[Any, Any]) -> bool:
        pairs = dict(zip(old, node.pairs(), strict=True))
        for name, (k, v) in pairs.items():
            if name in new and not self.walk(v, old[name], new[name], node, k):
                return False
        keys = [k for k, _ in pairs.values()]
        for name, (k, v) in pairs.items():
            if name not in new:
                self.remove(node, keys, keys.index(k), v)
        before = list(old)[-1]  # a key new before every kept one: last
        for name in new:
            if name in old:
                before = name
            else:
                self.insert_pair(node, pairs[before][1], name, new[name])
        return True

    def walk_seq(
        self,
        node: Node,
        old: list[Any],
        new: list[Any],
        parent: Node | None,
        key: Node | None,
    ) -> bool:
        items = node.children
        if len(new) == len(old):
            return all(
                self.walk(item, o, n, node, None)
                for item, o, n in zip(items, old, new, strict=True)
            )
        gone = _removed(old, new)
        if not node.flow and any(self.line_start(self._dash(i)) is None for i in items):
            gone = None  # `- - a`: an item shares its line, the list is written whole
        if len(new) > len(old) and all(map(same, old, new)):
            for value in new[len(old) :]:
                self.insert_item(node, value)
        elif gone is None:
            self.write(node, new, parent, key)
        for index in gone or []:
            self.remove(node, items, index, items[index])
        return True

    # -- the splices -------------------------------------------------------------------

    def hand_over(self, node: Node, old: Any, alias: Node) -> None:
        """Move ``node``'s anchor to ``alias``, which becomes a copy of ``old``: the
        only change of this round."""
        label = f"&{node.anchor}"
        start = self.text.index(label, node.start)
        end = start + len(label)
        while self.text[end] in " \t":
            end += 1
        if self.text[end] in "\r\n":  # `key: &name` over a block: `key:` stays clean
            while self.text[start - 1] in " \t":
                start -= 1
        self.splices = [(start, end, "")]
        self.write(alias, old, *self._parent(alias), anchor=str(node.anchor))

    def _parent(self, node: Node) -> tuple[Node | None, Node | None]:
        """The collection holding ``node``, and its key when it is a mapping's value."""
        todo = [self.root]
        while todo:
            parent = todo.pop()
            if node in parent.children:
                at = next(i for i, c in enumerate(parent.children) if c is node)
                key = (
                    parent.children[at - 1] if parent.kind == "map" and at % 2 else None
                )
                return parent, key
            todo += parent.children
        return None, None

    def write(
        self,
        node: Node,
        new: Any,
        parent: Node | None,
        key: Node | None,
        anchor: str = "",
    ) -> None:
        """Write ``new`` in place of ``node``, whose collection is ``parent``."""
        if parent is None or parent.flow:
            line = self.text[self.text.rfind("\n", 0, node.start) + 1 : node.start]
            indent: int | None = len(line) - len(line.lstrip(" "))
            if parent is not None and not self._lines_of(parent):
                indent = None  # a collection on one line stays on one
            label = f"&{anchor} " if anchor else ""
            written = label + self.inline(new, indent)
            self.splices.append((node.start, node.end, written))
        elif key is not None:  # from the colon on: a block value starts a line
            written = self.entry("K", new, _column(self.text, key.start), anchor)
            self._over_lines(key.end, self.content_end(node), written[1:])
        else:
            dash = self._dash(node)
            written = self.entry(None, new, _column(self.text, dash), anchor)
            self._over_lines(dash, self.content_end(node), written)

    def _over_lines(self, start: int, end: int, written: str) -> None:
        """Replace ``start:end`` with ``written``; a comment after ``end`` stays on the
        first line when ``written`` takes several (after a block scalar's last line
        it would be text)."""
        found = self.text.find("\n", end)
        rest = self.text[end : len(self.text) if found < 0 else found].rstrip("\r")
        if "\n" in written and rest.lstrip(" \t").startswith("#"):
            head, _, tail = written.partition("\n")
            written = f"{head}{rest}\n{tail}"
            end += len(rest)
        self.splices.append((start, end, written))

    def insert_pair(self, node: Node, after: Node, name: Any, value: Any) -> None:
        """Insert ``name: value`` into the mapping ``node`` after the value ``after``."""
        if not node.flow:
            column = _column(self.text, node.children[0].start)
            text = " " * column + self.entry(name, value, column)
            self._add_lines(text, self.line_after(self.content_end(after)))
        elif self.json:
            self._insert_flow(node, after, json.dumps(name, ensure_ascii=False), value)
        else:
            self._insert_flow(node, after, self._yaml([name], flow=True)[1:-1], value)

    def insert_item(self, node: Node, value: Any) -> None:
        """Append ``value`` to the sequence ``node``."""
        last = node.children[-1]
        if node.flow:
            self._insert_flow(node, last, None, value)
            return
        column = _column(self.text, self._dash(node.children[0]))
        text = " " * column + self.entry(None, value, column)
        self._add_lines(text, self.line_after(self.content_end(last)))

    def _lines_of(self, node: Node) -> bool:
        """Whether the flow collection ``node`` puts its first entry on a line."""
        return "\n" in self.text[node.start : node.children[0].start]

    def _insert_flow(
        self, node: Node, after: Node, key: str | None, value: Any
    ) -> None:
        first = node.children[0]
        head = "" if key is None else key + ": "
        if self._lines_of(node):  # an entry a line: as JSON
            column = _column(self.text, first.start)
            text = ",\n" + " " * column + head + self.inline(value, column)
        else:
            text = ", " + head + self.inline(value, None)
        self.splices.append((after.end, after.end, text))

    def remove(self, node: Node, starts: list[Node], index: int, last: Node) -> None:
        """Remove the entry (a key and ``last``, its value) or item at ``index`` of the
        collection ``node``; ``starts``: where each entry or item starts."""
        first = starts[index]
        following = starts[index + 1].start if index + 1 < len(starts) else None
        if node.flow:
            if following is not None:
                self.splices.append((first.start, following, ""))
            else:
                previous = node.children[node.children.index(first) - 1]
                self.splices.append((previous.end, last.end, ""))
            return
        begin = self._dash(first) if node.kind == "seq" else first.start
        line = self.line_start(begin)
        if line is not None:
            self.splices.append((line, self.line_after(self.content_end(last)), ""))
        elif following is not None and node.kind == "map":
            self.splices.append((begin, following, ""))
        else:
            raise LayoutError(f"line {self._line(begin)} holds more than what goes")


def splice_document(text: str, new: Any, old: Any = None) -> str:
    """``text`` changed where its document (``old``, read from it when None) differs
    from ``new``, every other byte kept; :class:`LayoutError` when that cannot be done.

    Example::

        splice_document("a: 1  # one\\nb: 2\\n", {"a": 1, "b": 3})  # "a: 1  # one\\nb: 3\\n"
    """
    for _ in range(100):  # each round moves one anchor, or ends
        round_ = _Round(text)
        done = round_.walk(
            round_.root, load(text) if old is None else old, new, None, None
        )
        text = round_.result()
        if done:
            return text
        old = None
    raise LayoutError("too many anchors to move")
