"""Walk a release folder the way ``git add`` would: ``.gitignore`` rules, ``--exclude``, no symlinks.

Matching uses pathspec's ``GitIgnoreSpec`` (git's wildmatch rules, negation included) rather than
fnmatch, because users write ``.gitignore`` files for git; as in git, a deeper ``.gitignore``
overrides a shallower one and nothing inside an ignored folder is looked at. Every file that is not published is
returned in ``ScanResult.ignored`` as its top-most path (a folder stands for all it holds), so
``init`` can list it under the manifest's ``ignore`` and ``verify`` does not call it unlisted.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

from hubrelease.errors import InputError
from hubrelease.fsutil import STATE_DIR, check_release_path, is_temp_name
from hubrelease.hashing import StatKey

# Never walked and never listed: verify skips these folders on its own.
SKIPPED_DIRS = frozenset({".git", STATE_DIR, "__pycache__", ".cache"})
# Not published by default (the Hub writes its own .gitattributes); listed under ``ignore``.
DEFAULT_EXCLUDES = (".gitignore", ".gitattributes", ".DS_Store")
GITIGNORE = ".gitignore"


@dataclass(frozen=True)
class ScannedFile:
    """A regular file to publish: its release-relative name, where it is, and its stat."""

    name: str
    path: Path
    key: StatKey


@dataclass(frozen=True)
class Skipped:
    """A path left out with a reason the user should see (symlink, unreadable, not a file)."""

    name: str
    reason: str


@dataclass
class ScanResult:
    """Files to publish, paths left out on purpose (for ``ignore``), and paths skipped with a warning."""

    files: list[ScannedFile] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


@dataclass(frozen=True)
class _Rules:
    """The ignore specs in force in one folder: (folder relative to the root, spec) pairs, the
    defaults and ``--exclude`` first, then each ``.gitignore`` from the root down."""

    specs: tuple[tuple[str, GitIgnoreSpec], ...]

    def matches(self, name: str, is_dir: bool) -> bool:
        # The first spec (defaults + --exclude) always wins; then, as in git, the deepest
        # .gitignore with a matching pattern decides, and its last matching pattern wins.
        key = name + "/" if is_dir else name
        forced = self.specs[0][1]
        if forced.match_file(key):
            return True
        for base, spec in reversed(self.specs[1:]):
            verdict = spec.check_file(key[len(base) + 1 :] if base else key).include
            if verdict is not None:
                return verdict
        return False

    def entering(self, folder: Path, rel: str) -> _Rules:
        """The rules for ``folder``: these plus its own ``.gitignore``, if any."""
        try:
            lines = (folder / GITIGNORE).read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return self
        except OSError as exc:
            raise InputError(f"cannot read {GITIGNORE}: {exc.strerror}", path=folder / GITIGNORE) from None
        return _Rules((*self.specs, (rel, _compile(lines))))


def _compile(lines: Sequence[str]) -> GitIgnoreSpec:
    """The spec of a ``.gitignore``; a line pathspec cannot compile (a lone backslash, a reversed range
    ``[z-a]``) is dropped: git's wildmatch tolerates both and they never match there."""
    try:
        return GitIgnoreSpec.from_lines(lines)
    except (ValueError, re.error):  # pathspec's pattern error, or a regex it built that re refuses ([z-a])
        return GitIgnoreSpec.from_lines([line for line in lines if _compiles(line)])


def _compiles(line: str) -> bool:
    try:
        GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error):
        return False
    return True


def scan_folder(root: Path, exclude: Sequence[str] = (), skip: Sequence[Path] = ()) -> ScanResult:
    """Every publishable regular file under ``root``, sorted by name.

    ``exclude`` holds gitignore-style patterns relative to ``root``; ``skip`` names files that are
    silently left out (the manifest being written).
    """
    if not root.is_dir():
        raise InputError("release folder does not exist or is not a folder", path=root)
    for pattern in exclude:
        if not _compiles(pattern):
            raise InputError(f"{pattern!r} is not a valid gitignore pattern", field="exclude")
    base = _Rules((("", GitIgnoreSpec.from_lines([*DEFAULT_EXCLUDES, *exclude])),))
    result = ScanResult()
    real_root = root.resolve()
    silent = {
        p.resolve().relative_to(real_root).as_posix() for p in skip if p.resolve().is_relative_to(real_root)
    }
    _walk(root, "", base.entering(root, ""), silent, result)
    result.files.sort(key=lambda f: f.name)
    return result


def _walk(folder: Path, rel: str, rules: _Rules, silent: set[str], result: ScanResult) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        result.skipped.append(Skipped(rel, f"cannot list folder: {exc.strerror}"))
        result.ignored.append(rel)
        return
    for entry in entries:
        name = f"{rel}/{entry.name}" if rel else entry.name
        path = Path(entry.path)
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError as exc:
            result.skipped.append(Skipped(name, f"cannot stat: {exc.strerror}"))
            result.ignored.append(name)
            continue
        is_dir = stat.S_ISDIR(st.st_mode)
        if is_dir and entry.name in SKIPPED_DIRS:
            continue
        if name in silent or is_temp_name(entry.name):  # temp twins of killed writes: verify skips them too
            continue
        if rules.matches(name, is_dir):
            result.ignored.append(name)
        elif stat.S_ISLNK(st.st_mode):
            result.skipped.append(Skipped(name, "is a symlink; not published (verify refuses symlinks)"))
            result.ignored.append(name)
        elif is_dir:
            _walk(path, name, rules.entering(path, name), silent, result)
        elif not _publishable(name, result):
            result.ignored.append(name)
        elif stat.S_ISREG(st.st_mode):
            result.files.append(ScannedFile(name, path, StatKey.of(st)))
        else:
            result.skipped.append(Skipped(name, "is not a regular file"))
            result.ignored.append(name)


def _publishable(name: str, result: ScanResult) -> bool:
    """False (with the reason recorded) for names the Hub and the manifest refuse, e.g. with a backslash."""
    try:
        check_release_path(name)
    except ValueError as exc:
        result.skipped.append(Skipped(name, f"cannot be a path in the repo ({exc})"))
        return False
    return True
