"""Run one fuzz case through the CLI in process and check the contract every input must meet.

The contract: exit 0, 1 or 2, never 3 or a traceback; an exit 2 is exactly one
``error:`` line on stderr; a failed command (exit 1 or 2) leaves the folder it was given as it was
(the ``.hubrelease/`` caches aside); each case stays within the bounds below.

Bounds, per case, in work rather than wall time so that a loaded machine cannot fail a case:
``CASE_CPU_SECONDS`` of the process's own CPU time (``ITIMER_PROF``: what the case computes, not
how long other jobs keep the cores; it catches blow-ups such as an alias bomb being expanded or a
loop that never ends) and ``CASE_RSS_GROWTH`` of growth in the test process's peak resident memory.
A case that blocks without computing (a read that never returns) is caught by the generous
``HANG_SECONDS`` wall ceiling, which is no performance bound: the slowest case takes a few seconds
of CPU on an idle machine.

Example counts are small so the tier runs in a few minutes on 2 cores; ``HUBRELEASE_FUZZ_SCALE=10``
runs ten times as many. The ``ci`` hypothesis profile (tests/conftest.py) derandomizes, so CI is
reproducible.
"""

from __future__ import annotations

import logging
import os
import re
import resource
import signal
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from hypothesis import HealthCheck, settings
from typer.testing import Result

from hubrelease.fsutil import STATE_DIR
from tests.factories.cli import invoke

# CliRunner gives each invocation its own stderr and closes it afterwards, while a library logger
# created during an earlier case (huggingface_hub's) still holds the old one: logging would print
# "--- Logging error ---" with a traceback for that closed stream. A real process has one stderr.
logging.raiseExceptions = False

_LOCATED = re.compile(r"error: .+:\d+: ")
CASE_CPU_SECONDS = 30
HANG_SECONDS = 900
CASE_RSS_GROWTH = 512 << 20
SCALE = max(1, int(os.environ.get("HUBRELEASE_FUZZ_SCALE", "1")))


def fuzz(count: int) -> settings:
    """Hypothesis settings for a fuzz test: ``count`` examples (times ``HUBRELEASE_FUZZ_SCALE``)."""
    return settings(
        max_examples=count * SCALE,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


class CaseTimeout(BaseException):
    """A case computed past ``CASE_CPU_SECONDS`` or blocked past ``HANG_SECONDS``."""


@contextmanager
def _watchdog(cpu_seconds: int, wall_seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        what = (
            f"used over {cpu_seconds} s of CPU"
            if signum == signal.SIGPROF
            else f"blocked past {wall_seconds} s"
        )
        raise CaseTimeout(f"case {what}")

    timers = (
        (signal.SIGPROF, signal.ITIMER_PROF, cpu_seconds),
        (signal.SIGALRM, signal.ITIMER_REAL, wall_seconds),
    )
    previous = [(signum, signal.signal(signum, expire)) for signum, _, _ in timers]
    for _, which, seconds in timers:
        signal.setitimer(which, seconds)
    try:
        yield
    finally:
        for _, which, _ in timers:
            signal.setitimer(which, 0)
        for signum, handler in previous:
            signal.signal(signum, handler)


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime_ns) of every file under ``folder``, outside the tool's own state folder."""
    state: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d != STATE_DIR]
        for name in filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            state[os.path.relpath(path, folder)] = (st.st_size, st.st_mtime_ns)
    return state


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def run_case(
    args: Sequence[str | os.PathLike[str]],
    folder: Path | None = None,
    *,
    located_list: bool = False,
    codes: Collection[int] = (0, 1, 2),
) -> Result:
    """Invoke the CLI on ``args`` and assert the contract; ``folder`` is checked for writes on failure.

    ``codes``: the exit codes allowed (a command reading a hostile server may also end in 4, the
    server's fault, as one ``error:`` line like an exit 2).

    ``located_list``: an exit 2 may be several ``error: FILE:LINE: field: message`` lines, one per
    problem (``build eval --spec`` reports every spec error at once, as its README section says).
    """
    argv = [os.fspath(a) for a in args]
    before = snapshot(folder) if folder is not None else None
    rss = peak_rss()
    with _watchdog(CASE_CPU_SECONDS, HANG_SECONDS):
        result = invoke(argv)
    where = f"{argv!r}: exit {result.exit_code}, stderr {result.stderr[-600:]!r}"
    assert result.exception is None or isinstance(result.exception, SystemExit), where
    assert result.exit_code in codes, where
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "internal error" not in output, where
    if result.exit_code in (2, 4):
        lines = result.stderr.strip("\n").split("\n")
        assert all(line.startswith("error: ") for line in lines), where
        assert len(lines) == 1 or (located_list and all(_LOCATED.match(line) for line in lines)), where
    if result.exit_code != 0 and before is not None and folder is not None:
        assert snapshot(folder) == before, f"{where}: a failed command changed files"
    assert peak_rss() - rss < CASE_RSS_GROWTH, (
        f"{where}: peak memory grew by over {CASE_RSS_GROWTH >> 20} MiB"
    )
    return result
