"""sha256sum files: what we write, coreutils checks; what coreutils writes, we read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hubrelease.errors import InputError
from hubrelease.hashing import format_sums, looks_like_sums, parse_sums, sha256_file
from tests.factories.cli import run_program


def test_written_file_passes_sha256sum_c(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a b.bin").write_bytes(b"a")
    (tmp_path / "sub" / "c.gguf").write_bytes(b"c")
    names = ["a b.bin", "sub/c.gguf"]
    (tmp_path / "SUMS").write_text(format_sums((n, sha256_file(tmp_path / n)) for n in names))
    sha256sum = shutil.which("sha256sum")
    assert sha256sum is not None
    done = run_program([sha256sum, "-c", "SUMS"], cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_reads_coreutils_output_including_escaped_and_bsd_forms(tmp_path: Path) -> None:
    (tmp_path / "back\\slash").write_bytes(b"x")
    (tmp_path / "plain").write_bytes(b"y")
    sha256sum = shutil.which("sha256sum")
    assert sha256sum is not None
    gnu = run_program(
        [sha256sum, "back\\slash", "plain"],
        cwd=tmp_path,
    ).stdout
    bsd = run_program([sha256sum, "--tag", "plain"], cwd=tmp_path).stdout
    assert looks_like_sums(gnu)
    entries = parse_sums(gnu + bsd, tmp_path / "SUMS")
    assert [e.name for e in entries] == ["back\\slash", "plain", "plain"]
    assert entries[0].sha256 == sha256_file(tmp_path / "back\\slash")
    assert format_sums([("back\\slash", entries[0].sha256)]) == gnu.splitlines(keepends=True)[0]


def test_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    text = "a" * 64 + "  ok.bin\nnot a checksum line\n"
    with pytest.raises(InputError) as info:
        parse_sums(text, tmp_path / "SUMS")
    assert str(info.value) == f"{tmp_path / 'SUMS'}:2: not a sha256sum line ('<64 hex>  <name>')"
