"""What a recipe may name: ``rebuild --check`` is what a reader runs on someone else's release, so every
path in a recipe is data a hostile release controls.

Outputs resolve inside the rebuild's own temporary folder (no ``..``, not absolute, no symlink leading
out, checked after resolution). Every file a builder reads is a regular file (never a device, FIFO or
socket) inside the release folder or a folder the reader declared (``rebuild --inputs DIR``), checked
after symlinks are resolved, and no larger than the recipe recorded. No builder imports or loads code
a release names: ``auto_map`` module files are copied as text into the temporary folder, where no
Python looks for modules.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from hubrelease.errors import InputError


class RecipeRefused(InputError):
    """A recipe names a path no rebuild may read or write (exit 2, naming the recipe and the field)."""


@dataclass(frozen=True)
class Confinement:
    """Where one recipe may read and write, and the sizes it recorded for the files it read."""

    recipe: str
    """How errors name the recipe: the first file it builds (``recipe of gguf/drafter.gguf``)."""
    roots: tuple[Path, ...]
    """Resolved folders inputs may come from: the release folder, then those given with ``--inputs``."""
    recorded: Mapping[str, int] = field(default_factory=dict)
    """Input path (as the recipe records it, from the release folder) -> recorded size in bytes."""

    def refuse(self, where: str, value: str, problem: str) -> RecipeRefused:
        return RecipeRefused(f"recipe of {self.recipe}: {where} {value!r} {problem}")

    def _inside(self, real: Path) -> bool:
        return any(real == root or root in real.parents for root in self.roots)

    def _resolve(self, path: Path, where: str, value: str) -> Path:
        try:
            real = path.resolve(strict=True)
        except FileNotFoundError:
            raise self.refuse(where, value, "does not exist") from None
        except (OSError, RuntimeError) as exc:  # a symlink loop, a component that is no folder
            raise self.refuse(where, value, f"cannot be resolved ({exc})") from None
        if not self._inside(real):
            raise self.refuse(
                where,
                value,
                "resolves outside the release folder; give --inputs DIR to allow reading from DIR",
            )
        return real

    def folder(self, path: Path, where: str, value: str) -> Path:
        """``path`` as a folder to read, after refusing one outside the roots or holding a device or FIFO
        (the builders open the files a folder's index names before any list of inputs exists)."""
        real = self._resolve(path, where, value)
        if not real.is_dir():
            return self.file(path, where, value)
        for entry in os.scandir(real):
            if entry.is_symlink():
                self._resolve(Path(entry.path), where, f"{value}/{entry.name}")
            mode = os.stat(entry.path).st_mode if entry.is_symlink() else entry.stat().st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise self.refuse(where, f"{value}/{entry.name}", "is not a regular file (a device or FIFO?)")
        return path

    def file(self, path: Path, where: str, value: str) -> Path:
        """``path`` as a file to read: regular, inside the roots, no larger than recorded."""
        real = self._resolve(path, where, value)
        info = real.stat()
        if not stat.S_ISREG(info.st_mode):
            raise self.refuse(where, value, "is not a regular file (a folder, device or FIFO)")
        size = self.recorded.get(value)
        if size is not None and info.st_size > size:
            raise self.refuse(where, value, f"holds {info.st_size} bytes, more than the {size} recorded")
        return path

    def input(self, path: Path, name: str) -> Path:
        """A file the builder finds in its source (``inputs.Screen``): checked by ``file``."""
        return self.file(path, "input", name)


def output_folder(work: Path, out: str, confinement: Confinement) -> Path:
    """``work / out``, refused unless it stays inside ``work`` (no ``..``, not absolute, no symlink out)."""
    parts = PurePosixPath(out).parts
    if not out or out.startswith("/") or "\\" in out or ".." in parts:
        raise confinement.refuse(
            "out", out, "must be a path inside the rebuild folder (no '..', not absolute)"
        )
    work.mkdir(parents=True, exist_ok=True)
    base = work.resolve()
    target = base.joinpath(*parts)
    real = target.resolve()
    if real != base and base not in real.parents:
        raise confinement.refuse("out", out, "resolves outside the rebuild folder (through a symlink)")
    return target
