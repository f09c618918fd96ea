"""Filesystems with a test-driven clock: exact "same tick" and "another filesystem" cases, no sleeps.

``FakeClockFS`` replaces ``os.stat``, ``os.lstat`` and ``os.fstat`` so that a regular file's mtime
and ctime are the fake clock's time of its last write through ``write`` (or "now", for files the
code under test writes itself: the stat cache's stamps), truncated to its filesystem's timestamp
granularity. ``mount`` makes a folder (or one file) look like another filesystem: its own
``st_dev`` and granularity, as an NFS, SMB, FAT or FUSE mount inside a release folder is. Only the
test moves the clock (``advance``), so a same-size rewrite in the same second as the last write,
or the clock ticking over while another file hashes, are exact instead of timing-dependent.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

SECOND_NS = 10**9


class FakeClockFS:
    """Fake timestamps (and devices, for ``mount``ed folders) for every stat of a regular file."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, granularity_ns: int = SECOND_NS) -> None:
        self.now_ns = 1_000 * SECOND_NS
        self.granularity_ns = granularity_ns
        self.written: dict[tuple[int, int], int] = {}
        self.mounts: list[tuple[str, int, int]] = []  # (real path, granularity, fake st_dev)
        real_stat, real_lstat, real_fstat = os.stat, os.lstat, os.fstat
        monkeypatch.setattr(os, "stat", lambda p, *a, **k: self._fake(real_stat(p, *a, **k), p))
        monkeypatch.setattr(os, "lstat", lambda p, *a, **k: self._fake(real_lstat(p, *a, **k), p))
        monkeypatch.setattr(
            os, "fstat", lambda fd: self._fake(real_fstat(fd), os.readlink(f"/proc/self/fd/{fd}"))
        )
        self._real_stat = real_stat

    def mount(self, path: Path, granularity_ns: int = SECOND_NS) -> int:
        """Make ``path`` (a folder and everything below it, or one file) another filesystem; its st_dev."""
        dev = 0x7E57_0000 + len(self.mounts)
        self.mounts.append((os.path.realpath(path), granularity_ns, dev))
        return dev

    def _mount_of(self, path: str | os.PathLike[str] | int) -> tuple[int, int | None]:
        """(granularity, fake st_dev or None) of the filesystem ``path`` is on."""
        if isinstance(path, int):  # os.stat(fd)
            path = os.readlink(f"/proc/self/fd/{path}")
        real = os.path.abspath(path)  # not realpath: it calls os.lstat, which is this fake
        for top, granularity, dev in self.mounts:
            if real == top or real.startswith(top + os.sep):
                return granularity, dev
        return self.granularity_ns, None

    def _fake(self, result: os.stat_result, path: Any) -> os.stat_result:
        granularity, dev = self._mount_of(path)
        regular = stat.S_ISREG(result.st_mode)
        if dev is None and not regular:
            return result
        fields = list(result)
        times = {
            "st_atime_ns": result.st_atime_ns,
            "st_mtime_ns": result.st_mtime_ns,
            "st_ctime_ns": result.st_ctime_ns,
        }
        if dev is not None:
            fields[2] = dev
        if regular:
            ns = self.written.get((result.st_dev, result.st_ino), self.now_ns)
            ns -= ns % granularity
            fields[7:10] = [ns // SECOND_NS] * 3
            times = dict.fromkeys(times, ns)
        return os.stat_result(fields, times)

    def write(self, path: Path, data: bytes) -> None:
        """Write ``data`` in place (same inode, as an editor's save) at the clock's current time."""
        with open(path, "r+b" if path.exists() else "wb") as handle:
            handle.truncate(0)
            handle.write(data)
        real = self._real_stat(path)
        self.written[(real.st_dev, real.st_ino)] = self.now_ns

    def advance(self, ns: int | None = None) -> None:
        """Move the clock on by ``ns`` (default: one tick of the main filesystem)."""
        self.now_ns += self.granularity_ns if ns is None else ns
