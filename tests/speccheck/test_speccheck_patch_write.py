"""The spec file written by --write: its mode and owner kept, and a write that fails
leaves it as it was, with no ``.NAME.part`` beside it and a typed error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_speccheck_units import SPEC

from service_api_speccheck import SpecCheckError, SpecWriteError
from service_api_speccheck._observation import replace as observation_replace
from service_api_speccheck._patch import write_patch

EDIT = [("#/components/schemas/Other/x-observed", "add", "2026-01-05")]


@pytest.mark.parametrize("mode", [0o444, 0o640, 0o600, 0o755])
def test_the_file_keeps_its_mode_and_owner(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "openapi.yaml"
    path.write_text(SPEC, "utf-8")
    owner = (1234, 1234) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(path, *owner)  # another owner where one may give it
    path.chmod(mode)
    assert write_patch(path, SPEC.encode(), EDIT) == 1
    assert "x-observed: " in path.read_text("utf-8")
    stat = path.stat()
    assert stat.st_mode & 0o7777 == mode
    assert (stat.st_uid, stat.st_gid) == owner
    assert os.listdir(tmp_path) == ["openapi.yaml"]


def test_a_link_stays_a_link_and_its_target_is_written(tmp_path: Path) -> None:
    target = tmp_path / "spec.yaml"
    target.write_text(SPEC, "utf-8")
    link = tmp_path / "openapi.yaml"
    link.symlink_to(target.name)
    write_patch(link, SPEC.encode(), EDIT)
    assert link.is_symlink()
    assert "x-observed: " in target.read_text("utf-8")


def test_a_write_that_fails_leaves_the_spec_as_it_was_and_no_part_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "openapi.yaml"
    path.write_text(SPEC, "utf-8")

    def read_only(source: object, target: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(os, "replace", read_only)
    with pytest.raises(SpecWriteError) as caught:
        write_patch(path, SPEC.encode(), EDIT)
    assert str(caught.value) == f"cannot write {path}: Read-only file system"
    assert isinstance(caught.value, SpecCheckError)
    assert isinstance(caught.value, OSError)  # the observer's save still catches it
    assert caught.value.path == path
    assert path.read_text("utf-8") == SPEC
    assert os.listdir(tmp_path) == ["openapi.yaml"]


def test_a_part_file_that_cannot_be_made_is_the_same_typed_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "openapi.yaml"
    path.write_text(SPEC, "utf-8")
    (tmp_path / ".openapi.yaml.part").mkdir()  # in the way: a folder of the name
    with pytest.raises(SpecWriteError, match="cannot write"):
        write_patch(path, SPEC.encode(), EDIT)
    assert path.read_text("utf-8") == SPEC


def test_the_old_name_writes_whole_files_as_before(tmp_path: Path) -> None:
    path = tmp_path / "observed.json"
    observation_replace(path, "{}\r\n")
    assert path.read_bytes() == b"{}\r\n"  # line ends as given, UTF-8
