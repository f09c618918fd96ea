"""Running the CLI in-process the way a user's shell would see it: exit code, stdout, stderr.

Every test that calls hubrelease in-process goes through ``invoke`` (typer's ``Result``, for tests that
look at the exception or the output streams) or ``run_cli`` (the three values a shell sees); tests
that need a real process (signals, Python's own top level) start ``hubrelease`` with subprocess.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from hubrelease.cli.app import app

_runner = CliRunner()


def invoke(
    args: Sequence[str | os.PathLike[str]], *, input: str | None = None, env: Mapping[str, str] | None = None
) -> Result:
    """``hubrelease ARGS...`` in this process; ``env`` adds to (not replaces) the environment."""
    return _runner.invoke(app, [os.fspath(a) for a in args], input=input, env=env)


def run_cli(*args: str | Path) -> tuple[int, str, str]:
    """``hubrelease ARGS...``: (exit code, stdout, stderr)."""
    result = invoke(args)
    return result.exit_code, result.stdout, result.stderr


def verify_json(manifest: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    """``hubrelease verify MANIFEST --json EXTRA...``: the exit code and the parsed report."""
    code, out, _ = run_cli("verify", manifest, "--json", *extra)
    return code, dict(json.loads(out))


def findings(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    """A verify report's findings as (kind, path, message)."""
    return [(f["kind"], f["path"], f["message"]) for f in report["findings"]]
