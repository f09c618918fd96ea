"""Running the CLI in-process the way a user's shell would see it: exit code, stdout, stderr."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from hubrelease.cli.app import app

_runner = CliRunner()


def run_cli(*args: str | Path) -> tuple[int, str, str]:
    """``hubrelease ARGS...``: (exit code, stdout, stderr)."""
    result = _runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr
