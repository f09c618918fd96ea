"""The folder walk: gitignore rules (nested, negated), --exclude, symlinks, unlistable folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hubrelease.errors import InputError
from hubrelease.onboarding.scan import scan_folder


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(name.encode())


def test_nested_gitignore_negation_and_exclude(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "a.bin",
        "keep.log",
        "x.log",
        "sub/deep/b.bin",
        "sub/deep/c.tmp",
        "build/out.bin",
        "notes.md",
    )
    (tmp_path / ".gitignore").write_text("*.log\n!keep.log\nbuild/\n", encoding="utf-8")
    (tmp_path / "sub" / ".gitignore").write_text("*.tmp\n", encoding="utf-8")
    result = scan_folder(tmp_path, exclude=["notes.md"])
    assert [f.name for f in result.files] == ["a.bin", "keep.log", "sub/deep/b.bin"]
    assert sorted(result.ignored) == [
        ".gitignore",
        "build",
        "notes.md",
        "sub/.gitignore",
        "sub/deep/c.tmp",
        "x.log",
    ]
    assert result.skipped == []
    assert result.files[0].key.size == len(b"a.bin")


def test_deeper_gitignore_overrides_and_exclude_comes_first(tmp_path: Path) -> None:
    touch(tmp_path, "a.tmp", "sub/b.tmp", "sub/c.bin", "d.bin")
    (tmp_path / ".gitignore").write_text("*.tmp\n", encoding="utf-8")
    (tmp_path / "sub" / ".gitignore").write_text("!b.tmp\n!c.bin\n", encoding="utf-8")
    result = scan_folder(tmp_path, exclude=["*.bin"])
    assert [f.name for f in result.files] == ["sub/b.tmp"]
    assert sorted(result.ignored) == [".gitignore", "a.tmp", "d.bin", "sub/.gitignore", "sub/c.bin"]


def test_symlinks_are_skipped_with_a_reason(tmp_path: Path) -> None:
    touch(tmp_path, "real/file.bin")
    os.symlink("real/file.bin", tmp_path / "link.bin")
    os.symlink("real", tmp_path / "linked-dir")
    os.symlink("missing", tmp_path / "dangling")
    result = scan_folder(tmp_path)
    assert [f.name for f in result.files] == ["real/file.bin"]
    assert [s.name for s in result.skipped] == ["dangling", "link.bin", "linked-dir"]
    assert {s.reason for s in result.skipped} == {"is a symlink; not published (verify refuses symlinks)"}
    assert result.ignored == ["dangling", "link.bin", "linked-dir"]


def test_skip_and_state_folders_are_silent(tmp_path: Path) -> None:
    touch(tmp_path, "m.yaml", "a.bin", ".git/HEAD", ".hubrelease/statcache.sqlite3", "__pycache__/x.pyc")
    result = scan_folder(tmp_path, skip=[tmp_path / "m.yaml"])
    assert [f.name for f in result.files] == ["a.bin"]
    assert result.ignored == [] and result.skipped == []


def test_unlistable_folder_is_skipped_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path, "a.bin", "locked/secret.bin")
    real_scandir = os.scandir

    def scandir(path: str | os.PathLike[str]) -> object:
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = scan_folder(tmp_path)
    assert [f.name for f in result.files] == ["a.bin"]
    assert [(s.name, s.reason) for s in result.skipped] == [
        ("locked", "cannot list folder: Permission denied")
    ]
    assert result.ignored == ["locked"]


def test_missing_folder_is_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="release folder does not exist"):
        scan_folder(tmp_path / "nope")


def test_gitignore_line_pathspec_cannot_compile_is_dropped_as_git_does(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("\\\n*.log\n", encoding="utf-8")
    (tmp_path / "a.log").write_text("x", encoding="utf-8")
    (tmp_path / "keep.txt").write_text("x", encoding="utf-8")
    result = scan_folder(tmp_path)
    assert [f.name for f in result.files] == ["keep.txt"]
    assert sorted(result.ignored) == [".gitignore", "a.log"]


def test_invalid_exclude_pattern_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        scan_folder(tmp_path, exclude=["\\"])
    assert str(info.value) == "exclude: '\\\\' is not a valid gitignore pattern"
