"""A file written whole or not at all, keeping its mode and owner.

Example::

    replace(Path("openapi.yaml"), text)  # SpecWriteError if it cannot be replaced
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ._observation import SpecCheckError


class SpecWriteError(SpecCheckError, OSError):
    """A file could not be written (a read-only file system, a folder one may not
    write, an owner one cannot give the new file); the file is as it was and no
    ``.NAME.part`` is left. An ``OSError`` and a :class:`SpecCheckError`.

    Example::

        try:
            report.write()
        except SpecWriteError as exc:
            print(exc)  # cannot write openapi.yaml: Read-only file system
    """

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}")
        self.path = path
        self.reason = reason


def replace(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, its line ends as they are) to ``path`` whole or not at
    all: a file beside it, given the mode and owner of the one it replaces, then renamed
    over it; :class:`SpecWriteError` when that cannot be done.

    Example::

        replace(Path("observed.json"), "{}")
    """
    target = Path(path).resolve()  # a symbolic link stays one: its target is written
    part = target.with_name(f".{target.name}.part")
    data = text.encode("utf-8")
    try:
        with open(part, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if target.exists():
            _same_mode_and_owner(target, part)
        os.replace(part, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            part.unlink()
        reason = exc.strerror or str(exc)
        raise SpecWriteError(Path(path), reason) from None


def _same_mode_and_owner(source: Path, target: Path) -> None:
    """Give ``target`` the mode and owner of ``source`` (a new owner only where one
    may give it: else the error leaves ``source`` as it is)."""
    before = source.stat()
    now = target.stat()
    owner = (before.st_uid, before.st_gid)
    if owner != (now.st_uid, now.st_gid):
        os.chown(target, *owner)
    mode = before.st_mode & 0o7777
    os.chmod(target, mode)
