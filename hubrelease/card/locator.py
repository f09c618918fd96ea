"""Locations inside the manifest's ``card:`` section -> ``ManifestError`` with the YAML line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hubrelease.errors import ManifestError
from hubrelease.manifest.load import line_of, read_tree
from hubrelease.validation import format_loc


class Locator:
    """Turns a ``card.*`` location into a ManifestError; the YAML is re-read only when an error occurs."""

    def __init__(self, manifest_path: Path) -> None:
        self._path = manifest_path
        self._tree: object | None = None

    def error(self, message: str, loc: Sequence[str | int]) -> ManifestError:
        """The error for ``loc`` (returned, for the caller to raise)."""
        if self._tree is None and self._path.is_file():
            self._tree = read_tree(self._path)
        line = line_of(self._tree, loc) if self._tree is not None else None
        return ManifestError(message, path=self._path, line=line, field=format_loc(loc))
