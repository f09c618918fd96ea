"""Atomic writes: all or nothing, and the file mode a plain open() would give."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hubrelease.errors import InputError
from hubrelease.fsutil import ReleaseFolder, atomic_open, atomic_write_text


def test_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "card.md"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_open(target) as handle:
        handle.write("half")
        raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["card.md"]


def test_new_file_gets_umask_mode_and_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.json"
        atomic_write_text(fresh, "{}")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        kept = tmp_path / "kept.sh"
        kept.write_text("#!/bin/sh\n")
        kept.chmod(0o750)
        atomic_write_text(kept, "#!/bin/sh\necho hi\n")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o750
    finally:
        os.umask(old)


def test_a_folder_as_target_is_a_clear_error(tmp_path: Path) -> None:
    from hubrelease.errors import InputError

    with pytest.raises(InputError) as info:
        atomic_write_text(tmp_path, "x")
    assert str(info.value) == f"{tmp_path}: is a folder; give the path of the file to write"
    assert list(tmp_path.iterdir()) == []


def test_release_folder_joins_as_os_path_join_and_refuses_escapes(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "out").symlink_to(tmp_path.parent)
    folder = ReleaseFolder(tmp_path)
    for name in ("a.bin", "sub/a.bin", "sub/"):
        assert folder.join(name) == os.path.join(tmp_path, name)
    for name in ("sub/out/x.bin", "/etc/passwd"):
        with pytest.raises(InputError, match="outside the release folder"):
            folder.join(name)
    inside_root = f"{str(tmp_path).lstrip('/')}/sub/a.bin"
    assert ReleaseFolder(Path("/")).join(inside_root) == os.path.join("/", inside_root)
