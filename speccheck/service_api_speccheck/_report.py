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
    """One thing the check found: a ``difference`` (the patch fixes it) or a note.

    ``kind`` is one of ``undeclared field``, ``type``, ``null``, ``format``, ``status``,
    ``content type``, ``header`` (differences), ``never seen``, ``enum candidate``
    (notes).

    Example::

        Finding("undeclared field", "Shipment.status", "string in 240 of 240")
    """

    kind: str
    where: str
    detail: str
    difference: bool = True


@attrs.define
class Report:
    """What a check found, and the patch that makes the spec say what was seen.

    ``observed`` is the observation compared (``requests`` sent, ``stopped`` when the
    budget ran out); ``assumptions`` maps the JSON pointer of each ``x-assumed`` to
    ``confirmed``, ``refuted`` or ``not observed``; ``edits`` add or widen
    (``--write``), ``marks`` add ``x-observed: DATE`` beside each ``x-assumed`` seen
    (confirmed, or refuted where the patch fixes it).

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
    edits: list[Edit] = attrs.Factory(list)
    marks: list[Edit] = attrs.Factory(list)

    @property
    def differences(self) -> list[Finding]:
        """The findings that are differences."""
        return [f for f in self.findings if f.difference]

    @property
    def matched(self) -> bool:
        """Whether the spec matched: no difference and no ``x-assumed`` refuted."""
        return not self.differences and "refuted" not in self.assumptions.values()

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
            lines += [f"  {f.kind:<17} {f.where}: {f.detail}" for f in found]
        lines += ["facts:", *(f"  {fact}" for fact in self.facts)]
        lines += [f"  changed: {change}" for change in changes(self.observed)]
        counts = Counter(self.assumptions.values())
        verdicts = ("confirmed", "refuted", "not observed")
        lines.append("x-assumed: " + ", ".join(f"{counts[v]} {v}" for v in verdicts))
        lines += [
            f"  refuted {p}" for p, v in self.assumptions.items() if v == "refuted"
        ]
        lines.append(
            f"patch: {len(self.edits)} changes, {len(self.marks)} x-observed marks"
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
            "findings": [finding._asdict() for finding in self.findings],
            "facts": self.facts,
            "assumptions": self.assumptions,
            "patch": {"changes": len(self.edits), "marks": len(self.marks)},
            "requests": self.observed["requests"],
            "budget_ran_out": bool(self.observed.get("stopped")),
        }

    def write(self) -> int:
        """Apply the patch to the spec file checked, which must be as it was when the
        check started; the number of edits.

        Example::

            report.write()  # 9
        """
        if self.spec_path is None or self.original is None:
            raise SpecCheckError("the check did not start from a spec file")
        return write_patch(self.spec_path, self.original, [*self.edits, *self.marks])
