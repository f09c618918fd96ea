"""Values from files are printed escaped, never as extra lines.

A GGUF's author chose its key names and string values; printed as they are, a newline in one let
the file print its own ``error:`` lines (140 fuzz hits in the campaign).
"""

from __future__ import annotations

from pathlib import Path

from hubrelease.printable import escaped, shown
from tests.factories.cli import run_cli
from tests.factories.drafters import write_raw_gguf

FORGED = "\nerror: x"


def test_a_gguf_key_with_a_newline_is_one_line(tmp_path: Path) -> None:
    path = write_raw_gguf(
        tmp_path / "forged.gguf",
        "llama",
        {f"dflash{FORGED}\x1b[2J\u2028.block_size": 16},
        [("t", (4,), 0, 16)],
    )
    code, stdout, stderr = run_cli("inspect", path)
    assert code == 0, stderr
    lines = (stdout + stderr).splitlines()
    assert not any(line.startswith("error: x") for line in lines), lines
    assert "  dflash\\nerror: x\\x1b[2J\\u2028.block_size = 16" in lines


def test_an_error_naming_a_file_stays_one_line(tmp_path: Path) -> None:
    code, _, stderr = run_cli("inspect", tmp_path / f"missing{FORGED}.gguf")
    assert code == 2
    [line] = stderr.splitlines()
    assert line.startswith("error: ") and "missing\\nerror: x.gguf" in line


def test_escaped_shows_every_control_and_keeps_the_rest() -> None:
    assert escaped("plain é ü 中") == "plain é ü 中"
    assert escaped("a\r\nb\x00\x7f\x9b\u202e\ud800") == "a\\r\\nb\\x00\\x7f\\x9b\\u202e\\ud800"


def test_shown_clips_and_survives_huge_integers() -> None:
    assert shown("a\nb") == "'a\\nb'"
    assert shown("9" * 5000, 20).endswith("... (5,002 characters)")
    assert shown(10**5000) == "an integer of about 5,000 digits"
