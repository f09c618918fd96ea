"""Running the CLI in-process the way a user's shell would see it: exit code, stdout, stderr.

Every test that calls hubrelease in-process goes through ``invoke`` (typer's ``Result``, for tests that
look at the exception or the output streams) or ``run_cli`` (the three values a shell sees); tests
that need a real process (signals, Python's own top level, a terminal, interpreter exit) go through
``spawn`` / ``finish`` / ``run_process``; any other program (``hf``, ``model_signing``, a ``python -c``
probe) through ``run_program``. Each waits within ``PROCESS_CEILING_S``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from typer.testing import CliRunner, Result

from hubrelease.cli.app import app
from tests.factories.waiting import PROCESS_CEILING_S

_runner = CliRunner()
ENTRY_POINT = Path(sys.executable).parent / "hubrelease"
"""The installed console script, as a user's shell runs it."""


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


def spawn(
    *args: str | Path,
    env: Mapping[str, str] | None = None,
    stdout: int | IO[Any] = subprocess.PIPE,
    setup: str | None = None,
) -> subprocess.Popen[str]:
    """``hubrelease ARGS...`` in a process of its own, stderr (and by default stdout) piped as text.

    ``env`` replaces the environment (default: this process's). ``setup`` is Python the child runs
    before the CLI (then it is ``python -c``, not the console script), to change what no flag reaches.
    """
    command = [str(ENTRY_POINT)]
    if setup is not None:
        command = [sys.executable, "-c", f"{setup}\nfrom hubrelease.cli.start import main\nmain()"]
    with _ctrl_c_as_at_a_terminal():
        return subprocess.Popen(
            [*command, *map(str, args)],
            env=dict(os.environ if env is None else env),
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
        )


@contextmanager
def _ctrl_c_as_at_a_terminal() -> Iterator[None]:
    """Children started in here take Ctrl-C as a terminal's foreground process does.

    A background job of a non-interactive shell (``bash scripts/check.sh &``, a CI step started that
    way) has SIGINT ignored, children inherit that, and CPython then installs no KeyboardInterrupt
    handler: the Ctrl-C tests failed 3 of 3 with the suite started so. A handler, unlike SIG_IGN, is
    reset to the default at exec, so one is set for the moment of the fork.
    """
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    """Wait for a ``spawn``-ed process: (exit code, stdout, stderr); killed and failed past the ceiling."""
    try:
        out, err = proc.communicate(timeout=PROCESS_CEILING_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(
            f"hubrelease still running after {PROCESS_CEILING_S:g} s: {err[-2000:]}"
        ) from None
    return proc.returncode, out or "", err or ""


def run_process(
    *args: str | Path, env: Mapping[str, str] | None = None, setup: str | None = None
) -> tuple[int, str, str]:
    """``spawn`` and ``finish``: what a shell sees of ``hubrelease ARGS...`` run as its own process."""
    return finish(spawn(*args, env=env, setup=setup))


def run_program(
    command: Sequence[str | Path],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``command`` run to its end, stdout and stderr captured as text; past ``PROCESS_CEILING_S``
    ``subprocess.TimeoutExpired`` fails the test (a hang guard, not a time limit)."""
    return subprocess.run(
        [os.fspath(part) for part in command],
        env=None if env is None else dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=PROCESS_CEILING_S,
        check=check,
    )
