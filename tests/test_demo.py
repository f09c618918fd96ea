"""The README's first command, ``bash scripts/demo.sh``: the main job on the built-in example, offline and
without a token, run as a user runs it (its own setup line included, pointed at this test's virtualenv)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_demo_builds_signs_pushes_and_verifies_the_example(tmp_path: Path) -> None:
    env = {**os.environ, "HUBRELEASE_VENV": sys.prefix, "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        ["bash", "scripts/demo.sh"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-3000:]
    assert "Traceback" not in said
    assert "OK (remote at main): 10 files: hubrelease.yaml and the 9 it pins" in said
    assert "signature valid, signer matches the pinned identity" in said
    [demo] = tmp_path.glob("hubrelease-demo.*")
    assert (demo / "example" / "model.sig").is_file()
