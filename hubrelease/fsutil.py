"""Filesystem helpers every layer may use: atomic writes and safe release-relative paths."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from hubrelease.errors import InputError

# Folder inside a release that hubrelease owns (stat cache, embedded state); never published.
STATE_DIR = ".hubrelease"
# Pinned targets' facts by pin (``hub.target_facts`` writes it, lint reads it; verify keys its lint on it).
TARGETS_CACHE = Path(STATE_DIR) / "targets.json"
# Every temp file and staging folder hubrelease writes starts with this, so a write killed halfway
# leaves a name that verify, init and add recognise (and skip) instead of taking it for data.
TEMP_PREFIX = ".hubrelease-tmp-"


def is_temp_name(name: str) -> bool:
    """True for the base name of a temp file or staging folder left by an interrupted write."""
    return name.startswith(TEMP_PREFIX)


def temp_prefix(name: str) -> str:
    """``mkstemp`` / ``mkdtemp`` prefix for a temporary twin of ``name``."""
    return f"{TEMP_PREFIX}{name}."


def staging_dir(target: Path) -> Path:
    """A fresh staging folder beside ``target`` (same filesystem, so a rename moves results in)."""
    import tempfile  # only writers pay for it (and for random, which it imports): not a warm verify

    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=temp_prefix(target.name), dir=target.parent))


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Write to a temp file beside ``path`` and rename it into place only if the block succeeds.

    Readers never see a half-written file, and a failure leaves the old file untouched.
    """
    target = Path(path)
    if target.is_dir():
        raise InputError("is a folder; give the path of the file to write", path=target)
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(target.name), suffix=".tmp", dir=target.parent)
    # mkstemp creates 0600; give the file the mode a plain open() would (or the one it had).
    try:
        perms = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        perms = 0o666 & ~_umask()
    os.chmod(tmp, perms)
    try:
        binary = "b" in mode
        with os.fdopen(fd, mode, encoding=None if binary else encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def atomic_write_text(path: str | Path, text: str) -> None:
    """Atomically replace ``path`` with ``text`` (UTF-8, ``\\n`` newlines)."""
    with atomic_open(path, "w") as handle:
        handle.write(text)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Atomically replace ``path`` with ``data``."""
    with atomic_open(path, "wb", encoding=None) as handle:
        handle.write(data)


_UNSAFE = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


def check_release_path(value: str) -> str:
    """Return ``value`` if it is a clean POSIX path inside a release folder, else raise ``ValueError``.

    Refuses absolute paths, ``..`` segments, empty segments, backslashes and the state folder,
    mirroring huggingface_hub's ``path_in_repo`` rules so a manifest can never point outside.
    """
    if not value or value.strip() != value:
        raise ValueError("path must be a non-empty relative path without surrounding spaces")
    if "\\" in value:
        raise ValueError(f"path {value!r} uses a backslash; use '/'")
    if _UNSAFE.search(value):
        # NUL cannot reach a system call and a lone surrogate cannot be encoded (or sent to the Hub).
        raise ValueError(f"path {value!r} holds a control character or a lone surrogate")
    if value.startswith("/"):  # POSIX: the only absolute form (no pathlib: 50,000 paths per 25k manifest)
        raise ValueError(f"path {value!r} is absolute; it must be relative to the release folder")
    parts = value.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"path {value!r} must not contain '..', '.' or empty segments")
    if parts[0] in (STATE_DIR, ".git"):
        raise ValueError(f"path {value!r} is inside a reserved folder ({parts[0]})")
    return value


class ReleaseFolder:
    """A release folder that joins relative paths and refuses any that escape it via symlinked folders.

    Each parent folder is resolved once, so checking 10,000 files in a few folders costs a few
    ``realpath`` calls, not 10,000.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real_root = root.resolve()
        self._root_text = os.fspath(root)
        self._prefix = os.path.join(self._root_text, "")  # what os.path.join puts before a relative name
        self._parents: dict[str, bool] = {}

    def path(self, relative: str) -> Path:
        """``root / relative``, or ``InputError`` if its folder resolves outside the release."""
        return Path(self.join(relative))

    def join(self, relative: str) -> str:
        """``path()`` as a string: verify's hot loop skips pathlib (half its per-file cost) and os.path.join."""
        candidate = (
            os.path.join(self._root_text, relative) if relative.startswith("/") else self._prefix + relative
        )
        parent = relative.rpartition("/")[0]
        inside = self._parents.get(parent)
        if inside is None:
            try:
                real_parent = (self.root / parent).resolve()
            except OSError as exc:
                raise InputError(f"cannot resolve {relative}: {exc.strerror}", path=candidate) from exc
            inside = real_parent == self.real_root or self.real_root in real_parent.parents
            self._parents[parent] = inside
        if not inside:
            raise InputError(f"{relative} resolves outside the release folder", path=candidate)
        return candidate


_PROC_FD = "/proc/self/fd"


def open_regular(path: str | Path) -> int:
    """A read-only descriptor of the regular file at ``path``, its last component not followed if it is
    a symlink (``ELOOP``), nor opened if it is a FIFO or device (``O_NONBLOCK``, then refused).

    What is read through the descriptor is that file, whatever ``path`` names afterwards: a release
    file swapped for a symlink to the token file after the check cannot be read by mistake.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def descriptor_path(fd: int, path: str | Path) -> str:
    """A path that opens the file behind ``fd`` itself (Linux's ``/proc/self/fd/N``), for libraries
    that take only paths (hf_xet, huggingface_hub's LFS upload); ``path`` where there is no such name."""
    if os.path.isdir(_PROC_FD):
        return f"{_PROC_FD}/{fd}"
    return os.fspath(path)


def read_regular(path: str | Path) -> bytes:
    """The bytes of the regular file at ``path`` (``open_regular``'s rules)."""
    fd = open_regular(path)
    with open(fd, "rb") as handle:
        return handle.read()


def relative_inside(path: Path, root: Path) -> str | None:
    """``path`` as a POSIX path relative to the (resolved) ``root``, or None if it lies outside."""
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None
