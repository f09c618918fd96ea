"""``sha256sum``-format files: written so anyone can check a release with coreutils, read as verify input.

Format per GNU coreutils: ``<64 hex><space><space or *><name>``; names containing a backslash or a
newline are escaped and the line starts with a backslash. The BSD form ``SHA256 (name) = hex``
(``sha256sum --tag``) is accepted on input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from hubrelease.errors import InputError
from hubrelease.safe_parse import name_problem

_GNU = re.compile(r"^(\\?)([0-9a-fA-F]{64}) [ *](.+)$")
_BSD = re.compile(r"^(\\?)SHA256 \((.+)\) = ([0-9a-fA-F]{64})$")


class SumEntry(NamedTuple):
    """One line of a checksum file (a NamedTuple: cheap to define, see ``hubrelease.findings``)."""

    sha256: str
    name: str
    line: int


def _escape(name: str) -> tuple[str, str]:
    if "\\" in name or "\n" in name:
        return "\\", name.replace("\\", "\\\\").replace("\n", "\\n")
    return "", name


def _unescape(name: str) -> str:
    return re.sub(r"\\(\\|n)", lambda m: "\n" if m.group(1) == "n" else "\\", name)


def format_sums(entries: Iterable[tuple[str, str]]) -> str:
    """Lines for (name, sha256) pairs, sorted by name so the output is stable."""
    lines = []
    for name, digest in sorted(entries):
        prefix, escaped = _escape(name)
        lines.append(f"{prefix}{digest}  {escaped}\n")
    return "".join(lines)


def looks_like_sums(text: str) -> bool:
    """True if the first non-blank line is a checksum line (used to accept sum files as verify input)."""
    for line in text.splitlines():
        if line.strip():
            return bool(_GNU.match(line) or _BSD.match(line))
    return False


def parse_sums(text: str, path: Path) -> list[SumEntry]:
    """Parse a checksum file; a malformed line is an ``InputError`` naming file and line."""
    entries: list[SumEntry] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.startswith("#"):
            continue
        gnu = _GNU.match(raw)
        bsd = _BSD.match(raw)
        if gnu:
            escaped, digest, name = gnu.groups()
        elif bsd:
            escaped, name, digest = bsd.groups()
        else:
            raise InputError("not a sha256sum line ('<64 hex>  <name>')", path=path, line=number)
        name = _unescape(name) if escaped else name
        problem = name_problem(name)  # no file is named so; the OS would refuse the NUL
        if problem is not None:
            raise InputError(f"file name {name!r} {problem}", path=path, line=number)
        entries.append(SumEntry(digest.lower(), name, number))
    if not entries:
        raise InputError("no checksum lines found", path=path)
    return entries
