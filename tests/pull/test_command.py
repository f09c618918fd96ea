"""`pull --exec` runs the command the release was measured with, the drafter named at the commit pulled."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke
from tests.factories.published import publish_example


def test_exec_runs_the_recorded_sglang_command_with_the_pulled_drafter(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = publish_example(hub, tmp_path)
    bin_dir, seen = tmp_path / "bin", tmp_path / "argv.txt"
    bin_dir.mkdir()
    fake = bin_dir / "sglang"  # stands in for the engine: records its arguments, exits 7
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{seen}"\nexit 7\n', encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "drafter"
    result = invoke(
        ["pull", example.repo, "--engine", "sglang", "--dir", str(out), "--exec", "--endpoint", hub.url]
    )
    assert result.exit_code == 7, result.stderr
    argv = seen.read_text(encoding="utf-8").splitlines()
    assert argv == [
        "serve",
        "--model-path", example.target_repo,
        "--speculative-algorithm", "DFLASH",
        "--speculative-draft-model-path", str(out),
        "--speculative-draft-model-revision", example.commit,
        "--speculative-num-draft-tokens", "4",
    ]  # fmt: skip
