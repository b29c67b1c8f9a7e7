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
    try:
        before = target.stat() if target.exists() else None
        with open(part, "wb") as file:
            file.write(text.encode("utf-8"))
            file.flush()
            os.fsync(file.fileno())
        if before is not None:
            if (before.st_uid, before.st_gid) != _owner(part):
                os.chown(part, before.st_uid, before.st_gid)
            os.chmod(part, before.st_mode & 0o7777)
        os.replace(part, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            part.unlink()
        raise SpecWriteError(Path(path), exc.strerror or str(exc)) from None


def _owner(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_uid, stat.st_gid
