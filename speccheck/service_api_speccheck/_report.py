"""The report of a check: text for people, JSON for machines, and its patch to write.

Neither holds a value of a record, a token or a secret: places in the spec, JSON types,
formats, counts, masked examples (``a-a-9-9``) and header forms (numbers as ``9``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import attrs

from ._observation import SpecCheckError, changes
from ._patch import Edit, write_patch

__all__ = ["Edit", "Finding", "Report"]


class Finding(NamedTuple):
    """One thing the check found, at one place of the spec: a ``difference`` (the client
    is affected) or a note. ``effect`` says what the client does about it, and what to do
    where the spec cannot say it; ``edits``, the patch's edits that fix it (none: a
    difference ``--write`` cannot fix, or a note).

    ``kind`` is one of ``undeclared field``, ``type``, ``null``, ``format``,
    ``required``, ``status``, ``probe``, ``page size``, ``paging``, ``body``,
    ``content type``, ``header`` (differences), ``rare field``, ``never seen``,
    ``enum candidate`` (notes).

    Example::

        Finding("undeclared field", "Shipment.status", "string in 240 of 240")
    """

    kind: str
    where: str
    detail: str
    difference: bool = True
    effect: str = ""
    edits: tuple[Edit, ...] = ()

    @property
    def fixed(self) -> bool:
        """Whether the patch fixes it."""
        return bool(self.edits)

    def line(self) -> str:
        """The finding as a line of the report.

        Example::

            Finding("header", "responses/Forbidden x-trace", "not declared").line()
        """
        effect = f"; {self.effect}" if self.effect else ""
        fix = " [--write fixes]" if self.difference and self.edits else ""
        return f"  {self.kind:<17} {self.where}: {self.detail}{effect}{fix}"


@attrs.define
class Report:
    """What a check found, and the patch that makes the spec say what was seen.

    ``observed`` is the observation compared (``requests`` sent, ``stopped`` when the
    budget ran out); ``assumptions`` maps the JSON pointer of each ``x-assumed`` to
    ``confirmed``, ``refuted`` or ``not observed``; ``edits`` are the edits of the
    findings (``--write``), each once, and nothing else; ``marks`` add
    ``x-observed: DATE`` beside each ``x-assumed`` seen (confirmed, or refuted where the
    patch fixes it); ``written``, whether :meth:`write` wrote them.

    Example::

        report = check_spec("openapi.yaml", client)
        print(report.text())
        if not report.matched:
            report.write()
    """

    spec_path: Path | None
    original: bytes | None = attrs.field(repr=False)
    observed: dict[str, Any] = attrs.field(repr=False)
    findings: list[Finding]
    facts: list[str] = attrs.Factory(list)
    assumptions: dict[str, str] = attrs.Factory(dict)
    marks: list[Edit] = attrs.Factory(list)
    written: bool = False

    @property
    def edits(self) -> list[Edit]:
        """The patch: the edits of the findings, each once, in the report's order."""
        found = {edit[:2]: edit for f in self.findings for edit in f.edits}
        return list(found.values())

    @property
    def differences(self) -> list[Finding]:
        """The findings that are differences."""
        return [f for f in self.findings if f.difference]

    @property
    def matched(self) -> bool:
        """Whether the spec matched: no difference and no ``x-assumed`` refuted."""
        return not self.differences and "refuted" not in self.assumptions.values()

    @property
    def settled(self) -> bool:
        """Whether the patch fixes every difference (a refuted ``x-assumed`` is one)."""
        return all(f.fixed for f in self.differences)

    def text(self) -> str:
        """The report for a terminal, a line a finding.

        Example::

            print(report.text())
        """
        stop = " (the budget ran out)" if self.observed.get("stopped") else ""
        notes = [f for f in self.findings if not f.difference]
        lines = [
            f"{self.spec_path}: {self.observed['requests']} requests{stop}, "
            f"{len(self.differences)} differences, {len(notes)} notes"
        ]
        for title, found in (("differences", self.differences), ("notes", notes)):
            if found:
                lines.append(f"{title}:")
            lines += [f.line() for f in found]
        lines += ["facts:", *(f"  {fact}" for fact in self.facts)]
        lines += [f"  changed: {change}" for change in changes(self.observed)]
        counts = Counter(self.assumptions.values())
        verdicts = ("confirmed", "refuted", "not observed")
        lines.append("x-assumed: " + ", ".join(f"{counts[v]} {v}" for v in verdicts))
        lines += [
            f"  refuted {p}" for p, v in self.assumptions.items() if v == "refuted"
        ]
        written = ", written" if self.written else ""
        lines.append(
            f"patch: {len(self.edits)} changes, {len(self.marks)} x-observed marks"
            f"{written}"
        )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON (``--format json``).

        Example::

            json.dumps(report.to_json())
        """
        return {
            "spec": str(self.spec_path),
            "matched": self.matched,
            "settled": self.settled,
            "findings": [
                finding._asdict()
                | {
                    "edits": [
                        f"{action} {pointer}" for pointer, action, _ in finding.edits
                    ]
                }
                for finding in self.findings
            ],
            "facts": self.facts,
            "assumptions": self.assumptions,
            "patch": {
                "changes": len(self.edits),
                "marks": len(self.marks),
                "written": self.written,
            },
            "requests": self.observed["requests"],
            "budget_ran_out": bool(self.observed.get("stopped")),
        }

    def write(self) -> int:
        """Apply the patch to the spec file checked, which must be as it was when the
        check started; the number of edits. An ``OSError`` (a file that cannot be
        replaced) leaves the file as it was.

        Example::

            report.write()  # 9
        """
        if self.spec_path is None or self.original is None:
            raise SpecCheckError("the check did not start from a spec file")
        edits = [*self.edits, *self.marks]
        count = write_patch(self.spec_path, self.original, edits)
        self.written = bool(edits)  # nothing to write: nothing "written"
        return count
