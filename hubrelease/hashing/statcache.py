"""A stat cache so unchanged files are not re-hashed: SQLite under ``<release>/.hubrelease/``.

An entry is keyed on (device, inode, size, mtime_ns, ctime_ns) and applies git's racy-clean rule,
in the order that makes it sound: a stamp is taken on the filesystem's own clock (the mtime of a
stamp file) *before* any byte is read, and an entry is trusted only if the file's mtime and ctime
are strictly older than that stamp. Any write at or after the stamp then either changes the key
(a later tick) or lands in the stamp's tick (racy, so not trusted), whatever the timestamp
granularity. A stamp taken after hashing would trust a same-size rewrite made in the same tick as
the previous write while other files were still hashing.

"The filesystem's own clock" is per filesystem: a release folder may hold a mount (``weights/`` on
NFS, SMB, FAT or a FUSE bucket, with 1-second timestamps) whose clock and granularity are not those
of ``.hubrelease/``. A stamp from the fine-grained filesystem is later than a coarse mtime of the
same second, so a same-size rewrite in that second kept its key and was trusted (11-12 of
12 stale OKs, scripts/statcache_mixed_fs.py). So one stamp is taken per device (``st_dev``) that
holds files to hash, on that device: ``.hubrelease/stamp`` for its own, a temp file created and
removed beside a file for any other. A device where no stamp can be made (read-only, or the file's
folder is on another device) gets no entries: its files are hashed every time, never trusted.
A cache that is corrupt, foreign or of another version is discarded and rebuilt, never trusted.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from hubrelease.fsutil import STATE_DIR, temp_prefix

CACHE_NAME = "statcache.sqlite3"
_FORMAT_PREFIX = "hubrelease-statcache-"
# 2: stamps per device. A version-1 entry for a file on another filesystem may carry a
# stamp from the wrong clock, so version-1 caches are discarded, not read.
_FORMAT = f"{_FORMAT_PREFIX}2"


class StatKey(NamedTuple):
    """The identity of a file's content as far as ``stat`` can tell (a NamedTuple: see ``hubrelease.findings``)."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> StatKey:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _racy(key: StatKey, stamp_ns: int) -> bool:
    """Modified in the stamp's clock tick or later: the digest may predate the bytes."""
    return key.mtime_ns >= stamp_ns or key.ctime_ns >= stamp_ns


class StatCache:
    """Maps release-relative paths to digests, valid only while their ``StatKey`` is unchanged."""

    def __init__(self, root: Path) -> None:
        self.folder = root / STATE_DIR
        self.path = self.folder / CACHE_NAME
        self.discarded_reason: str | None = None
        self._rows: dict[str, tuple[str, int, int, int, int, int, str, int]] | None = None
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        self.folder.mkdir(parents=True, exist_ok=True)
        existed = self.path.exists()
        try:
            db = self._connect()
            row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            if row is not None and row[0] != _FORMAT and str(row[0]).startswith(_FORMAT_PREFIX):
                raise sqlite3.DatabaseError(f"written by another hubrelease version ({row[0]})")
            if row is None or row[0] != _FORMAT:
                raise sqlite3.DatabaseError("not a hubrelease stat cache")
            db.execute(
                "SELECT path, dev, ino, size, mtime_ns, ctime_ns, sha256, stamp_ns FROM entries LIMIT 1"
            )
            return db
        except sqlite3.DatabaseError as exc:
            if existed:
                self.discarded_reason = f"{self.path}: {exc}; rebuilt"
            with contextlib.suppress(NameError, sqlite3.Error):
                db.close()
            for suffix in ("", "-journal", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{self.path}{suffix}")
            db = self._connect()
            db.executescript(
                """
                CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE entries (
                    path TEXT PRIMARY KEY, dev INTEGER, ino INTEGER, size INTEGER,
                    mtime_ns INTEGER, ctime_ns INTEGER, sha256 TEXT NOT NULL, stamp_ns INTEGER NOT NULL
                );
                """
            )
            db.execute("INSERT INTO meta VALUES ('format', ?)", (_FORMAT,))
            db.commit()
            return db

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute("BEGIN")
        db.execute("COMMIT")
        return db

    def lookup(self, rel_path: str, key: StatKey) -> str | None:
        """The cached digest if the file is provably unchanged since it was hashed."""
        if self._rows is None:
            # One query for the whole table: a warm verify of 10,000 files is one SELECT, not 10,000.
            self._rows = {
                row[0]: row
                for row in self._db.execute(
                    "SELECT path, dev, ino, size, mtime_ns, ctime_ns, sha256, stamp_ns FROM entries"
                )
            }
        row = self._rows.get(rel_path)
        # row[1:6] is (dev, ino, size, mtime_ns, ctime_ns): a StatKey is a tuple of those five.
        if row is None or row[1:6] != key or _racy(key, row[7]):
            return None
        return str(row[6])

    def stamps(self, files: Iterable[tuple[StatKey, str | Path]]) -> dict[int, int]:
        """Per device holding ``files``, its idea of "now", on its own clock and granularity (git's
        index-mtime trick, one stamp per filesystem; see the module docstring).

        Take them before reading the files whose digests ``store`` will record with them. A device
        missing from the result could not be stamped: its files are not cached.
        """
        own = os.stat(self.folder).st_dev
        beside: dict[int, str | Path] = {}
        for key, path in files:
            beside.setdefault(key.dev, path)
        stamps: dict[int, int] = {}
        for dev, path in beside.items():
            stamp = self._own_stamp() if dev == own else _stamp_beside(path, dev)
            if stamp is not None:
                stamps[dev] = stamp
        return stamps

    def _own_stamp(self) -> int:
        path = self.folder / "stamp"
        with open(path, "wb") as handle:
            handle.write(b"hubrelease\n")
        return os.stat(path).st_mtime_ns

    def store(self, entries: list[tuple[str, StatKey, str]], stamps: Mapping[int, int]) -> None:
        """Record digests of files whose stat was ``key`` before and after a read begun after their
        device's stamp (``stamps``, from ``stamps()``).

        Racy entries (modified in or after their stamp's tick) and entries of a device without a
        stamp are not recorded: they could never be trusted.
        """
        rows = []
        for path, key, digest in entries:
            stamp = stamps.get(key.dev)
            if stamp is not None and not _racy(key, stamp):
                rows.append((path, key.dev, key.ino, key.size, key.mtime_ns, key.ctime_ns, digest, stamp))
        if not rows:
            return
        with contextlib.closing(self._db.cursor()) as cur:
            cur.execute("BEGIN")
            cur.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            cur.execute("COMMIT")
        self._rows = None

    def close(self) -> None:
        self._db.close()


def _stamp_beside(path: str | Path, dev: int) -> int | None:
    """The mtime of a temp file created (and removed) in the folder of ``path``, if that is on ``dev``.

    The file is created, never written to: creation sets its mtime and ctime from the filesystem's
    clock, which is the point. None when the folder is read-only or on another device.
    """
    import tempfile  # only a hashing run over a second filesystem pays for it

    folder = os.path.dirname(os.path.realpath(path))
    try:
        fd, name = tempfile.mkstemp(prefix=temp_prefix("stamp"), dir=folder)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name)
    return st.st_mtime_ns if st.st_dev == dev else None
