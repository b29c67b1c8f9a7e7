"""The report of a check: text for people, JSON for machines, and its patch to write.

Neither holds a value of a record, a token or a secret: places in the spec, JSON types,
formats, counts, masked examples (``a-a-9-9``) and header forms (numbers as ``9``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from ._patch import Edit, write_patch
from ._shapes import SpecCheckError

__all__ = ["Finding", "Report"]


@attrs.frozen
class Finding:
    """One thing the check found: a ``difference`` (the patch fixes it) or a note.

    ``kind`` is one of ``undeclared field``, ``type``, ``null``, ``format``, ``status``,
    ``content type``, ``header`` (differences), ``never seen``, ``no body``, ``header
    never sent``, ``enum candidate`` (notes).

    Example::

        Finding("undeclared field", "Shipment.status", "string in 240 of 240")
    """

    kind: str
    where: str
    detail: str
    difference: bool = True


@attrs.frozen
class Report:
    """What a check found, and the patch that makes the spec say what was seen.

    ``assumptions`` maps the JSON pointer of each ``x-assumed`` to ``confirmed``,
    ``refuted`` or ``not observed``; ``edits`` add or widen (``--write``), ``marks``
    add ``x-observed: DATE`` beside each ``x-assumed`` the patched spec sees confirmed.

    Example::

        report = check_spec("openapi.yaml", client)
        print(report.text())
        if not report.matched:
            report.write()
    """

    spec_path: Path | None
    fingerprint: str | None
    requests: int
    stopped: bool
    findings: list[Finding]
    facts: list[str]
    assumptions: dict[str, str]
    edits: list[Edit]
    marks: list[Edit]

    @property
    def differences(self) -> list[Finding]:
        """The findings that are differences."""
        return [f for f in self.findings if f.difference]

    @property
    def matched(self) -> bool:
        """Whether the spec matched: no difference and no ``x-assumed`` refuted."""
        return not self.differences and "refuted" not in self.assumptions.values()

    def count(self, status: str) -> int:
        """How many ``x-assumed`` are ``status``."""
        return sum(s == status for s in self.assumptions.values())

    def text(self) -> str:
        """The report for a terminal, a line a finding.

        Example::

            print(report.text())
        """
        stop = " (the budget ran out)" if self.stopped else ""
        lines = [
            f"{self.spec_path or 'the spec'}: {self.requests} requests{stop}, "
            f"{len(self.differences)} differences, "
            f"{len(self.findings) - len(self.differences)} notes"
        ]
        for title, difference in (("differences", True), ("notes", False)):
            found = [f for f in self.findings if f.difference is difference]
            lines += [f"{title}:"] if found else []
            lines += [f"  {f.kind:<17} {f.where}: {f.detail}" for f in found]
        lines += ["facts:", *(f"  {fact}" for fact in self.facts)]
        counts = (
            f"{self.count(s)} {s}" for s in ("confirmed", "refuted", "not observed")
        )
        lines.append(f"x-assumed: {', '.join(counts)}")
        refuted = [p for p, s in self.assumptions.items() if s == "refuted"]
        lines += [f"  refuted {pointer}" for pointer in refuted]
        lines.append(
            f"patch: {len(self.edits)} changes, {len(self.marks)} x-observed marks"
            + (" (--write applies it)" if self.edits or self.marks else "")
        )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON (``--format json``).

        Example::

            json.dumps(report.to_json())
        """
        return {
            "spec": str(self.spec_path) if self.spec_path else None,
            "requests": self.requests,
            "budget_ran_out": self.stopped,
            "matched": self.matched,
            "findings": [attrs.asdict(f) for f in self.findings],
            "facts": self.facts,
            "assumptions": self.assumptions,
            "patch": {"changes": len(self.edits), "marks": len(self.marks)},
        }

    def write(self, path: str | Path | None = None) -> int:
        """Apply the patch to the spec file (``path``, default the one checked), which
        must be as it was when the check started; returns the number of edits.

        Example::

            report.write()  # 9
        """
        target = Path(path or self.spec_path or "")
        if self.fingerprint is None or not target.is_file():
            raise SpecCheckError(f"{target}: not the spec file the check started from")
        return write_patch(target, self.fingerprint, [*self.edits, *self.marks])
