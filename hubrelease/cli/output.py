"""Where output goes: results on stdout, messages and progress on stderr, JSON when asked.

Progress bars are drawn only on an interactive stderr outside CI and outside ``--json``; otherwise
huggingface_hub's own tqdm bars are switched off too, so logs stay clean.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.progress import Progress as RichProgress

from hubrelease.progress import NULL_PROGRESS, Progress

if TYPE_CHECKING:
    from rich.table import Table

stdout = Console(soft_wrap=True, highlight=False)
stderr = Console(stderr=True, soft_wrap=True, highlight=False)


def interactive(json_mode: bool = False) -> bool:
    """True when a human is watching: stderr is a TTY, not CI, not ``--json``."""
    if json_mode or os.environ.get("CI") or os.environ.get("GITHUB_ACTIONS") == "true":
        return False
    return sys.stderr.isatty()


def quiet_library_progress() -> None:
    """Silence huggingface_hub's tqdm bars (used outside interactive mode).

    Through its environment variable when huggingface_hub is not imported yet: importing it just
    to switch bars off would cost a command like ``verify`` half a second.
    """
    if "huggingface_hub" not in sys.modules:
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
        return
    from huggingface_hub.utils.tqdm import disable_progress_bars

    disable_progress_bars()


class _RichProgress:
    """Adapter from library progress events to one rich bar with bytes/s and ETA."""

    def __init__(self, bar: RichProgress) -> None:
        self._bar = bar
        self._task: TaskID | None = None

    def start(self, total_bytes: int, description: str) -> None:
        self._task = self._bar.add_task(description, total=total_bytes)

    def advance(self, nbytes: int) -> None:
        if self._task is not None:
            self._bar.advance(self._task, nbytes)

    def finish(self) -> None:
        if self._task is not None:
            self._bar.remove_task(self._task)
            self._task = None


@contextlib.contextmanager
def progress(json_mode: bool = False) -> Iterator[Progress]:
    """Yield a progress sink: a rich bar when interactive, else a no-op."""
    if not interactive(json_mode):
        quiet_library_progress()
        yield NULL_PROGRESS
        return
    bar = RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(binary_units=True),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=stderr,
        transient=True,
    )
    with bar:
        yield _RichProgress(bar)


# Wide enough for any path and digest: without a terminal, rich would squeeze tables into 80 columns.
_PIPE_WIDTH = 100_000


def print_table(table: Table) -> None:
    """A table on stdout: fitted to a terminal, else one line per row (CI logs, pipes, files)."""
    if stdout.file.isatty():
        stdout.print(table)
    else:  # rich caps print(width=) at the console's own width, so a wide console of its own
        wide = Console(width=_PIPE_WIDTH, highlight=False, no_color=stdout.no_color, force_terminal=False)
        wide.print(table, crop=False)


def emit_json(payload: Any) -> None:
    """Write one JSON document to stdout (stable key order, UTF-8)."""
    sys.stdout.write(json.dumps(payload, indent=2, sort_keys=False, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def github_annotation(level: str, message: str, file: str | None = None) -> None:
    """Print a GitHub Actions workflow command when running under Actions."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    escaped = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    location = f" file={file}" if file else ""
    sys.stdout.write(f"::{level}{location}::{escaped}\n")


def error_line(message: str) -> None:
    """One red line on stderr: the only way errors reach the user (brackets in it are printed as is)."""
    stderr.print(f"[bold red]error:[/] {escape(message)}", markup=True, highlight=False)


def warn_line(message: str) -> None:
    stderr.print(f"[yellow]warning:[/] {escape(message)}", markup=True, highlight=False)


def info_line(message: str) -> None:
    stderr.print(message, markup=False, highlight=False)
