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
        keys = self.children[::2]
        values = self.children[1::2]
        return list(zip(keys, values, strict=True))


def parse(text: str) -> tuple[Node, dict[str, list[Node]]]:
    """The root node of ``text`` and its alias nodes by anchor name."""
    stack: list[Node] = [Node("seq", 0)]
    aliases: dict[str, list[Node]] = {}
    for event in yaml.parse(text, Loader=_LOADER):
        start = _index(event.start_mark, 0)
        end = _index(event.end_mark, len(text))
        anchor = getattr(event, "anchor", None)
        node = Node("scalar", start, end, anchor=anchor)
        if isinstance(event, yaml.AliasEvent):
            node.kind = "alias"
            node.name = str(event.anchor)
            node.anchor = None
            aliases.setdefault(node.name, []).append(node)
        elif isinstance(event, yaml.ScalarEvent):
            node.name = event.value
            if event.style in ("|", ">"):
                node.header = text[start : start + 8]
        elif isinstance(event, yaml.CollectionStartEvent):
            node.kind = "map"
            if isinstance(event, yaml.SequenceStartEvent):
                node.kind = "seq"
            node.flow = bool(event.flow_style)
        elif isinstance(event, yaml.CollectionEndEvent):
            stack.pop().end = end
            continue
        else:
            continue
        stack[-1].children.append(node)
        if node.kind in ("map", "seq"):
            stack.append(node)
    if not stack[0].children:
        raise LayoutError("the file holds no document")
    return stack[0].children[0], aliases


def _index(mark: Any, default: int) -> int:
    return default if mark is None else mark.index


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
        if a.keys() != b.keys():
            return False
        return all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        if len(a) != len(b):
            return False
        return all(map(same, a, b))
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

    def increase_indent(
        self,
        flow: bool = False,
        indentless: bool = False,
    ) -> None:
        super().increase_indent(flow, indentless and not self.indented_lists)

    def choose_scalar_style(self) -> str:
        style = str(super().choose_scalar_style() or "")
        # a single-quoted scalar can always be double-quoted; not the other way round
        if style == "'":
            return self.quote
        return style


_SEQ = "tag:yaml.org,2002:seq"
_STR = "tag:yaml.org,2002:str"


def _represent_list(dumper: _Dumper, data: list[Any]) -> yaml.Node:
    flow = None  # as dumped: block in a block file, flow in a flow one
    if data and _leaves(data) and dumper.flow_leaves:
        flow = True
    return dumper.represent_sequence(_SEQ, data, flow_style=flow)


def _represent_items(dumper: _Dumper, data: _Items) -> yaml.Node:
    return dumper.represent_sequence(_SEQ, data, flow_style=False)


def _represent_str(dumper: _Dumper, data: str) -> yaml.Node:
    style = None
    if "\n" in data.strip("\n") and not data.endswith("\n\n"):
        # a description over lines stays readable; not one that keeps its blank last
        # lines (`|+`), which the line end after it would change
        style = "|"
    return dumper.represent_scalar(_STR, data, style=style)


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
    if node.kind != kind:
        return False
    if not isinstance(old, of) or not isinstance(new, of):
        return False
    if kind == "seq":
        return len(node.children) == len(old)
    keys = [k.name for k in node.children[::2]]
    # a merge key `<<` brings entries of no line of their own: the mapping goes whole
    return "<<" not in keys and len(keys) == len(old)


def _column(text: str, at: int) -> int:
    line = text.rfind("\n", 0, at) + 1
    return at - line


def _removed(old: list[Any], new: list[Any]) -> list[int] | None:
    """The indexes of ``old`` whose removal leaves ``new``, or None."""
    gone = []
    at = 0
    for index, item in enumerate(old):
        if at < len(new) and same(item, new[at]):
            at += 1
        else:
            gone.append(index)
    if at < len(new):
        return None
    return gone


class _Round:
    """One reading of the text, and the splices that bring it closer to a document."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.newline = "\n"
        if "\r\n" in text:
            self.newline = "\r\n"
        self.root, self.aliases = parse(text)
        self.splices: list[tuple[int, int, str]] = []
        self.anchors: dict[str, Node] = {}
        root = self.root
        # JSON: a flow mapping whose first key is double-quoted
        self.json = root.kind == "map" and root.flow and bool(root.children)
        self.json_indent: int | None = None
        if self.json:
            first = root.children[0].start
            self.json = text[first] == '"'
            if self._lines_of(root):
                self.json_indent = _column(text, first)
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
            if node.anchor:
                self.anchors[node.anchor] = node
            mark = self.text[node.start : node.start + 1]
            if node.kind == "scalar" and mark in ("'", '"'):
                quotes[mark] += 1
            if node.kind == "map" and not node.flow:
                for key, value in node.pairs():
                    self._learn_entry(key, value, steps, lists)
        self.step = 2
        if steps:
            step = steps.most_common(1)[0][0]
            self.step = min(max(step, 1), 9)
        quote = "'"
        if quotes["'"] < quotes['"']:
            quote = '"'
        self.dumper: type[_Dumper] = type(
            "_FileDumper",
            (_Dumper,),
            {
                "quote": quote,
                "flow_leaves": lists["flow"] >= lists["block"],
                "indented_lists": lists["indented"] >= lists["level"],
            },
        )

    def _learn_entry(
        self,
        key: Node,
        value: Node,
        steps: Counter[int],
        lists: Counter[str],
    ) -> None:
        """Count how an entry of a block mapping indents its value, and its list."""
        indent = _column(self.text, key.start)
        if not value.children or (value.flow and value.kind == "map"):
            return
        first = value.children[0]
        if value.kind == "map":
            steps[_column(self.text, first.start) - indent] += 1
            return
        if all(c.kind == "scalar" for c in value.children):
            style = "flow" if value.flow else "block"
            lists[style] += 1
        if not value.flow:
            dash = _column(self.text, self._dash(first))
            lists["indented" if dash > indent else "level"] += 1

    def result(self) -> str:
        """The text with the splices made; :class:`LayoutError` when two overlap."""
        out: list[str] = []
        at = 0
        # by place; two insertions at one place in the order they were made
        ordered = sorted(self.splices, key=lambda splice: splice[:2])
        for start, end, new in ordered:
            if start < at:
                line = self._line(start)
                raise LayoutError(f"two changes meet at line {line}")
            out.append(self.text[at:start])
            out.append(new.replace("\n", self.newline))
            at = end
        out.append(self.text[at:])
        return "".join(out)

    def splice(
        self,
        start: int,
        end: int,
        text: str,
    ) -> None:
        """Put ``text`` in place of ``start:end`` (an insertion when they are equal)."""
        self.splices.append((start, end, text))

    # -- what is written -------------------------------------------------------------

    def _yaml(
        self,
        value: Any,
        flow: bool,
    ) -> str:
        out = yaml.dump(
            value,
            Dumper=self.dumper,
            default_flow_style=flow,
            sort_keys=False,
            allow_unicode=True,
            width=_WIDTH,
            indent=self.step,
        )
        out = str(out).removesuffix("\n...\n")  # a scalar's document end
        return out.removesuffix("\n")

    @staticmethod
    def _indented(text: str, column: int) -> str:
        """``text`` with each line after the first moved right by ``column``."""
        first, *rest = text.split("\n")
        lines = [first]
        for line in rest:
            if line:  # an empty line of a block scalar stays empty
                line = " " * column + line
            lines.append(line)
        return "\n".join(lines)

    def inline(
        self,
        value: Any,
        column: int | None,
    ) -> str:
        """``value`` where a flow collection's value goes, lines after the first
        (JSON's) at ``column``; on one line when ``column`` is None."""
        if not self.json:
            # as an item of a flow list: in a flow context `a,b` is quoted
            return self._yaml([value], flow=True)[1:-1]
        if column is None:
            return json.dumps(value, ensure_ascii=False)
        dumped = json.dumps(value, indent=self.json_indent, ensure_ascii=False)
        return self._indented(dumped, column)

    def _block(self, value: Any) -> bool:
        """Whether ``value`` is written over lines of its own in a block collection."""
        if not value or not isinstance(value, dict | list):
            return False
        if isinstance(value, list) and _leaves(value):
            return not self.dumper.flow_leaves
        return True

    def entry(
        self,
        key: Any,
        value: Any,
        column: int,
        anchor: str = "",
    ) -> str:
        """``key: value`` in a block mapping whose keys start at ``column`` (``-
        value`` in a block sequence when ``key`` is None), ``anchor`` on the value."""
        if key is not None:
            text = self._yaml({key: value}, flow=False)
            if anchor:
                head, _, rest = text.partition(":")
                text = f"{head}: &{anchor}{rest}"
            return self._indented(text, column)
        text = self._yaml(_Items([value]), flow=False)
        if anchor:
            # `- &name a: 1` would anchor the key: a mapping starts the next line
            gap = " "
            if self._block(value):
                gap = "\n  "
            text = f"- &{anchor}{gap}{text[2:]}"
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
        indicators = node.header.split("\n")[0]
        if "+" in indicators:
            return end  # a kept block scalar: its trailing line ends are its value
        while end > node.start and self.text[end - 1] in " \t\r\n":
            end -= 1
        return end

    def line_after(self, at: int) -> int:
        """The start of the line after the one ``at`` is on."""
        if at and self.text[at - 1] == "\n":
            return at
        found = self.text.find("\n", at)
        if found < 0:
            return len(self.text)
        return found + 1

    def line_start(self, at: int) -> int | None:
        """The start of ``at``'s line if only spaces come before ``at`` on it."""
        start = self.text.rfind("\n", 0, at) + 1
        if self.text[start:at].strip(" \t"):
            return None
        return start

    def _add_lines(
        self,
        text: str,
        at: int,
    ) -> None:
        """Insert whole lines at ``at``, a line's start (or the end of the text)."""
        if at == len(self.text) and not self.text.endswith("\n"):
            self.splice(at, at, "\n" + text)  # the last line still has no line end
        else:
            self.splice(at, at, text + "\n")

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
        aliases = self.aliases.get(node.anchor or "", [])
        later = [alias for alias in aliases if alias.start > node.start]
        if later:
            self.hand_over(node, old, later[0])
            return False
        if _both(node, "map", dict, old, new):
            kept = [name for name in old if name in new]
            if kept:
                return self.walk_map(node, old, new, parent, key)
        if _both(node, "seq", list, old, new) and old and new:
            return self.walk_seq(node, old, new, parent, key)
        self.write(node, new, parent, key)
        return True

    def walk_map(
        self,
        node: Node,
        old: dict[Any, Any],
        new: dict[Any, Any],
        parent: Node | None,
        key: Node | None,
    ) -> bool:
        pairs = dict(zip(old, node.pairs(), strict=True))
        keys = [k for k, _ in pairs.values()]
        values = [v for _, v in pairs.values()]
        gone = [index for index, name in enumerate(old) if name not in new]
        first_line = self.line_start(keys[0].start)
        shared = not node.flow and first_line is None
        if shared and gone[:2] == [0, 1]:
            # `- a: 1` loses `a: 1` up to the next key, which goes too: written whole
            self.write(node, new, parent, key)
            return True
        for name, (k, v) in pairs.items():
            if name not in new:
                continue
            if not self.walk(v, old[name], new[name], node, k):
                return False
        self.remove(node, keys, values, gone)
        before = list(old)[-1]  # a key new before every kept one: last
        for name in new:
            if name in old:
                before = name
                continue
            after = pairs[before][1]
            self.insert_pair(node, after, name, new[name])
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
            changed = zip(items, old, new, strict=True)
            walks = (
                self.walk(item, before, after, node, None)
                for item, before, after in changed
            )
            return all(walks)
        grown = len(new) > len(old)
        appended = grown and all(map(same, old, new))
        if appended:
            for value in new[len(old) :]:
                self.insert_item(node, value)
            return True
        gone = _removed(old, new)
        if not node.flow:
            dashes = [self._dash(item) for item in items]
            if None in map(self.line_start, dashes):
                gone = None  # `- - a`: an item shares its line; the list goes whole
        if gone is None:
            self.write(node, new, parent, key)
            return True
        self.remove(node, items, items, gone)
        return True

    # -- the splices -------------------------------------------------------------------

    def hand_over(
        self,
        node: Node,
        old: Any,
        alias: Node,
    ) -> None:
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
        parent, key = self._parent(alias)
        self.anchors[alias.name] = node  # the copy is written as the anchored was
        self.write(alias, old, parent, key, anchor=str(node.anchor))

    def _parent(self, node: Node) -> tuple[Node | None, Node | None]:
        """The collection holding ``node``, and its key when it is a mapping's value."""
        todo = [self.root]
        while todo:
            parent = todo.pop()
            todo += parent.children
            if node not in parent.children:
                continue
            at = parent.children.index(node)
            if parent.kind == "map" and at % 2:
                return parent, parent.children[at - 1]
            return parent, None
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
        end = self.content_end(node)
        written_as = node
        if node.kind == "alias":  # a copy is written as what the alias names
            written_as = self.anchors.get(node.name, node)
        flow = written_as.flow and isinstance(new, dict | list) and bool(new)
        label = ""
        if anchor:
            label = f" &{anchor}"
        if parent is None or parent.flow:
            self._write_flow(node, new, parent, anchor)
        elif flow:  # flow stays flow: `key: {type: integer}`, `- [a, b]`
            inline = self.inline(new, None)
            start = key.end if key is not None else self._dash(node)
            head = ":" if key is not None else "-"
            self._over_lines(start, end, f"{head}{label} {inline}")
        elif key is not None:  # from the colon on: a block value starts a line
            column = _column(self.text, key.start)
            written = self.entry("K", new, column, anchor)
            self._over_lines(key.end, end, written[1:])
        else:
            dash = self._dash(node)
            column = _column(self.text, dash)
            written = self.entry(None, new, column, anchor)
            self._over_lines(dash, end, written)

    def _write_flow(
        self,
        node: Node,
        new: Any,
        parent: Node | None,
        anchor: str,
    ) -> None:
        column = _column(self.text, node.start)
        line = self.text[node.start - column : node.start]
        indent: int | None = len(line) - len(line.lstrip(" "))
        if parent is not None and not self._lines_of(parent):
            indent = None  # a collection on one line stays on one
        written = self.inline(new, indent)
        if anchor:
            written = f"&{anchor} {written}"
        self.splice(node.start, node.end, written)

    def _over_lines(
        self,
        start: int,
        end: int,
        written: str,
    ) -> None:
        """Replace ``start:end`` with ``written``; a comment after ``end`` stays on the
        first line when ``written`` takes several (after a block scalar's last line
        it would be text)."""
        if self.text[end - 1] == "\n":  # a kept block scalar ended with its line end
            written += "\n"
        line_end = self.line_after(end)
        rest = self.text[end:line_end].rstrip("\r\n")
        comment = rest.lstrip(" \t").startswith("#")
        if "\n" in written and comment:
            head, _, tail = written.partition("\n")
            written = f"{head}{rest}\n{tail}"
            end += len(rest)
        self.splice(start, end, written)

    def insert_pair(
        self,
        node: Node,
        after: Node,
        name: Any,
        value: Any,
    ) -> None:
        """Insert ``name: value`` into the mapping ``node`` after the value ``after``."""
        if node.flow and self.json:
            key = json.dumps(name, ensure_ascii=False)
            self._insert_flow(node, after, key, value)
        elif node.flow:
            key = self._yaml([name], flow=True)[1:-1]
            self._insert_flow(node, after, key, value)
        else:
            column = _column(self.text, node.children[0].start)
            text = " " * column + self.entry(name, value, column)
            at = self.line_after(self.content_end(after))
            self._add_lines(text, at)

    def insert_item(
        self,
        node: Node,
        value: Any,
    ) -> None:
        """Append ``value`` to the sequence ``node``."""
        last = node.children[-1]
        if node.flow:
            self._insert_flow(node, last, None, value)
            return
        column = _column(self.text, self._dash(node.children[0]))
        text = " " * column + self.entry(None, value, column)
        at = self.line_after(self.content_end(last))
        self._add_lines(text, at)

    def _lines_of(self, node: Node) -> bool:
        """Whether the flow collection ``node`` puts its first entry on a line."""
        return "\n" in self.text[node.start : node.children[0].start]

    def _insert_flow(
        self, node: Node, after: Node, key: str | None, value: Any
    ) -> None:
        head = ""
        if key is not None:
            head = key + ": "
        if self._lines_of(node):  # an entry a line, as JSON writes them
            column = _column(self.text, node.children[0].start)
            written = self.inline(value, column)
            text = ",\n" + " " * column + head + written
        else:
            text = ", " + head + self.inline(value, None)
        self.splice(after.end, after.end, text)

    def remove(
        self,
        node: Node,
        starts: list[Node],
        ends: list[Node],
        gone: list[int],
    ) -> None:
        """Remove the entries (or items) at the indexes ``gone`` of the collection
        ``node``; ``starts`` and ``ends``: the node each begins and ends with."""
        kept = set(range(len(starts))) - set(gone)
        last_kept = max(kept, default=-1)
        for index in gone:
            if not node.flow:
                self._remove_lines(node, starts, ends, index)
            elif index < last_kept:
                following = starts[index + 1].start
                self.splice(starts[index].start, following, "")  # and the comma after
            else:
                previous = ends[index - 1].end
                self.splice(previous, ends[index].end, "")  # and the comma before

    def _remove_lines(
        self,
        node: Node,
        starts: list[Node],
        ends: list[Node],
        index: int,
    ) -> None:
        begin = starts[index].start
        if node.kind == "seq":
            begin = self._dash(starts[index])
        line = self.line_start(begin)
        if line is not None:
            end = self.line_after(self.content_end(ends[index]))
            self.splice(line, end, "")
        elif index + 1 < len(starts) and node.kind == "map":
            following = starts[index + 1].start
            self.splice(begin, following, "")  # `- a: 1` loses `a: 1` and its line end
        else:
            line = self._line(begin)
            raise LayoutError(f"line {line} holds more than what goes")


def splice_document(
    text: str,
    new: Any,
    old: Any = None,
) -> str:
    """``text`` changed where its document (``old``, read from it when None) differs
    from ``new``, every other byte kept; :class:`LayoutError` when that cannot be done.

    Example::

        splice_document("a: 1  # one\\nb: 2\\n", {"a": 1, "b": 3})  # "a: 1  # one\\nb: 3\\n"
    """
    for _ in range(100):  # each round moves one anchor, or ends
        round_ = _Round(text)
        if old is None:
            old = load(text)
        done = round_.walk(round_.root, old, new, None, None)
        text = round_.result()
        if done:
            return text
        old = None
    raise LayoutError("too many anchors to move")
