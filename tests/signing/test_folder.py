"""The file set `model_signing verify` hashes, listed without hashing, by model-signing's own rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hubrelease.signing.folder import hidden, model_signing_view
from hubrelease.signing.statement import IGNORE_PATHS, SignedFiles


def _signed(*ignore_paths: str) -> SignedFiles:
    return SignedFiles({}, ignore_paths, "files", "sha256", "m", "0" * 64)


@pytest.mark.parametrize(
    ("ignore_paths", "name", "expected"),
    [
        ((), "model.sig", True),  # the --signature file
        ((), ".gitattributes", True),
        ((), ".github/workflows/x.yml", True),
        ((), ".hubrelease/x", False),
        (IGNORE_PATHS, ".hubrelease/x", True),
        (IGNORE_PATHS, ".cache/huggingface/download/x.metadata", True),
        (IGNORE_PATHS, ".cache/other", False),
        (("",), "config.json", True),  # the folder itself
        ((".",), "bench/x.jsonl", True),
        (("/",), "config.json", False),  # outside the folder: dropped
        (("..",), "config.json", False),
        (("bench",), "bench/x.jsonl", True),
        (("bench",), "benchmark.json", False),
        (("bench/..",), "bench/x.jsonl", False),
    ],
)
def test_hidden_follows_model_signings_ignore_rules(
    ignore_paths: tuple[str, ...], name: str, expected: bool
) -> None:
    assert hidden(name, _signed(*ignore_paths)) is expected


def test_the_view_lists_unignored_files_and_refuses_a_symlink_or_fifo(tmp_path: Path) -> None:
    for name in ("config.json", "bench/a.jsonl", ".hubrelease/evil.py", ".git/config", "model.sig"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    (tmp_path / ".hubrelease" / "statcache.sqlite3").write_text("hubrelease's own")
    view = model_signing_view(tmp_path, _signed())
    assert view == ((".hubrelease/evil.py", "bench/a.jsonl", "config.json"), None)
    (tmp_path / ".git" / "link").symlink_to(tmp_path / "config.json")  # under an ignored path: still refused
    assert model_signing_view(tmp_path, _signed()).refusal == (
        ".git/link",
        "a symlink: `model_signing verify` refuses the folder",
    )
    (tmp_path / ".git" / "link").unlink()
    os.mkfifo(tmp_path / "pipe")
    refusal = model_signing_view(tmp_path, _signed()).refusal
    assert refusal is not None and refusal[0] == "pipe"
