"""Where output goes: results on stdout, messages and progress on stderr, JSON when asked.

Progress bars are drawn only on an interactive stderr outside CI and outside ``--json``; otherwise
huggingface_hub's own tqdm bars are switched off too, so logs stay clean.

rich loads only when something needs it (a table, a bar, colour on a terminal): importing it costs
more than a warm ``verify`` does (bench/startup_bench.py). One-line messages and listings to a pipe or
file, what CI and pre-commit hooks see, are written as plain text, which is what rich writes there too.
Every command module imports this one, for ``--help`` too, so the helpers it writes through
(``redaction``, ``printable``, ``progress``) are imported where a line is written.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

    from hubrelease.progress import Progress

_consoles: dict[str, Console] = {}
_quiet = False


def quiet() -> bool:
    """Whether ``-q/--quiet`` is in effect."""
    return _quiet


def set_quiet(quiet: bool = True) -> None:
    """``-q/--quiet``: notes, warnings, tables and progress are dropped; results and errors stay."""
    global _quiet
    _quiet = quiet


class _Redacting:
    """A stand-in for sys.stdout / sys.stderr (looked up at each write, as CliRunner swaps them)
    that passes every write through ``redaction.redact``: rich consoles write through it."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def _target(self) -> TextIO:
        return sys.stdout if self._name == "stdout" else sys.stderr

    def write(self, text: str) -> int:
        from hubrelease.redaction import redact

        return self._target.write(redact(text))

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._target, attr)


def __getattr__(name: str) -> Console:
    """``output.stdout`` / ``output.stderr``: rich consoles, created on first use."""
    if name not in ("stdout", "stderr"):
        raise AttributeError(name)
    if name not in _consoles:
        from rich.console import Console

        _consoles[name] = Console(file=_Redacting(name), soft_wrap=True, highlight=False)  # type: ignore[arg-type]
    return _consoles[name]


def _plain(stream: TextIO) -> bool:
    """No terminal, no forced colour: rich would write exactly the unstyled text."""
    return not os.environ.get("FORCE_COLOR") and not stream.isatty()


def styled_line(label: str, style: str, text: str, *, stream: str = "stdout") -> None:
    """``label`` in ``style`` (rich style name) then ``text``, on one line: a control character in it
    (from a file's or a server's value: a newline in a GGUF key) is shown as its escape."""
    from hubrelease.printable import escaped
    from hubrelease.redaction import redact

    target: TextIO = sys.stdout if stream == "stdout" else sys.stderr
    text = escaped(redact(text))
    if _plain(target):
        target.write(f"{label} {text}\n")
        target.flush()
        return
    from rich.markup import escape

    __getattr__(stream).print(f"[{style}]{escape(label)}[/] {escape(text)}", markup=True, highlight=False)


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
        self._task: TaskID | None = None  # rich's task id

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
    if _quiet or not interactive(json_mode):
        from hubrelease.progress import NULL_PROGRESS

        quiet_library_progress()
        yield NULL_PROGRESS
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.progress import Progress as RichProgress

    bar = RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(binary_units=True),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=__getattr__("stderr"),
        transient=True,
    )
    with bar:
        yield _RichProgress(bar)


TTY_ROWS = 100
"""Rows of a listing drawn on a terminal; the rest are counted. Laid out by rich, 20,000 rows took 25 s."""


def print_rows(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    styles: Mapping[str, str] | None = None,
    right: Collection[int] = (),
    what: str = "rows",
) -> None:
    """A listing on stdout, one row per line; ``styles`` colours a row's first cell by its value.

    Without a terminal (CI logs, pre-commit hooks, pipes, files): every row as plain text in aligned
    columns, as rich lays out a borderless table there, in one write. On a terminal: a rich table
    fitted to its width (the last column folds), the first ``TTY_ROWS`` rows, then how many more.
    Cells are text, never markup; a cell with a control character (a newline in a file name) is
    shown as its repr, so a row stays one line. ``right``: indexes of right-aligned columns.
    """
    if _quiet or not rows:
        return
    if not sys.stdout.isatty():
        from hubrelease.redaction import redact

        table = [list(header), *([_cell(c) for c in row] for row in rows)]
        widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
        lines = []
        for row in table:
            cells = [
                c.rjust(w) if i in right else c.ljust(w)
                for i, (c, w) in enumerate(zip(row[:-1], widths, strict=True))
            ]
            lines.append("  ".join([*cells, row[-1]]) + "\n")
        sys.stdout.write(redact("".join(lines)))
        sys.stdout.flush()
        return
    from rich.table import Table
    from rich.text import Text

    grid = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for i, name in enumerate(header):
        grid.add_column(name, justify="right" if i in right else "left")
    grid.columns[-1].overflow = "fold"  # a long detail wraps, whole
    for values in rows[:TTY_ROWS]:
        first, *rest = (_cell(v) for v in values)
        grid.add_row(Text(first, style=(styles or {}).get(values[0], "")), *map(Text, rest))
    stdout = __getattr__("stdout")
    stdout.print(grid)
    if len(rows) > TTY_ROWS:
        more = f"... and {len(rows) - TTY_ROWS} more {what} (all of them: --json, or without a terminal)"
        stdout.print(more, markup=False, highlight=False)


def _cell(text: str) -> str:
    return text if text.isprintable() else repr(text)


def value_line(text: str) -> None:
    """A line of a result on stdout that holds values read from a file or a server, escaped
    (``printable.escaped``) so that it stays one line."""
    from hubrelease.printable import escaped
    from hubrelease.redaction import redact

    line = escaped(redact(text))
    if _plain(sys.stdout):
        sys.stdout.write(line + "\n")
        return
    __getattr__("stdout").print(line, markup=False, highlight=False)


SCHEMA_VERSION = 1
"""What every command's ``--json`` document says first (docs/reference/conventions.md, "--json output")."""


def document(command: str | None, /, **fields: object) -> dict[str, object]:
    """A command's ``--json`` document: ``schema_version``, ``command`` (None for the documents the docs
    shows without one: lint, inspect, build, render-card), then ``fields`` in the order given."""
    head: dict[str, object] = {"schema_version": SCHEMA_VERSION}
    if command is not None:
        head["command"] = command
    return head | fields


def emit_document(command: str | None, /, **fields: object) -> None:
    """Write ``document(command, **fields)`` to stdout: the one way a command answers ``--json``."""
    emit_json(document(command, **fields))


def emit_json(payload: Any) -> None:
    """Write one JSON document to stdout (stable key order, UTF-8)."""
    import json  # here, not at the top: every command module imports this one, --help included

    from hubrelease.redaction import redact

    sys.stdout.write(redact(json.dumps(payload, indent=2, sort_keys=False, ensure_ascii=False)) + "\n")
    sys.stdout.flush()


def github_annotation(level: str, message: str, file: str | None = None) -> None:
    """Print a GitHub Actions workflow command when running under Actions."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    from hubrelease.redaction import redact

    escaped = redact(message).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    location = f" file={file}" if file else ""
    sys.stdout.write(f"::{level}{location}::{escaped}\n")


def error_line(message: str) -> None:
    """One red line on stderr: the only way errors reach the user (brackets in it are printed as is)."""
    styled_line("error:", "bold red", message, stream="stderr")


def debug_text(text: str) -> None:
    """Diagnostics for a bug report (``HUBRELEASE_DEBUG``) on stderr, redacted, never styled."""
    from hubrelease.redaction import redact

    sys.stderr.write(redact(text if text.endswith("\n") else text + "\n"))
    sys.stderr.flush()


def warn_line(message: str) -> None:
    if _quiet:
        return
    styled_line("warning:", "yellow", message, stream="stderr")


def info_line(message: str) -> None:
    if _quiet:
        return
    if _plain(sys.stderr):
        from hubrelease.redaction import redact

        sys.stderr.write(redact(message) + "\n")
        return
    __getattr__("stderr").print(message, markup=False, highlight=False)
