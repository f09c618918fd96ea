"""The stat cache trusts an entry only while (dev, ino, size, mtime, ctime) match and the entry is not racy."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from hubrelease.fsutil import STATE_DIR
from hubrelease.hashing import StatCache, StatKey
from hubrelease.hashing.statcache import CACHE_NAME


def _key(path: Path) -> StatKey:
    return StatKey.of(os.stat(path))


def test_hit_after_store_and_miss_after_change(tmp_path: Path) -> None:
    target = tmp_path / "a.bin"
    target.write_bytes(b"abc")
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))  # clearly older than the stamp
    cache = StatCache(tmp_path)
    cache.store([("a.bin", _key(target), "d" * 64)], cache.stamps([(_key(target), target)]))
    assert cache.lookup("a.bin", _key(target)) == "d" * 64
    target.write_bytes(b"abd")
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))  # same size, same mtime: ctime still moved
    assert cache.lookup("a.bin", _key(target)) is None


def test_racily_clean_entry_is_not_trusted(tmp_path: Path) -> None:
    target = tmp_path / "a.bin"
    target.write_bytes(b"abc")
    cache = StatCache(tmp_path)
    stamps = cache.stamps([(_key(target), target)])
    stamp = stamps[_key(target).dev]
    os.utime(target, ns=(stamp, stamp))  # file modified in the stamp's own tick
    key = _key(target)
    cache.store([("a.bin", key, "e" * 64)], stamps)
    assert cache.lookup("a.bin", key) is None


def test_corrupt_cache_is_rebuilt_not_trusted(tmp_path: Path) -> None:
    (tmp_path / STATE_DIR).mkdir()
    (tmp_path / STATE_DIR / CACHE_NAME).write_bytes(b"this is not sqlite" * 100)
    cache = StatCache(tmp_path)
    assert cache.discarded_reason is not None
    assert "rebuilt" in cache.discarded_reason
    assert cache.lookup("a.bin", StatKey(1, 2, 3, 4, 5)) is None


def test_foreign_sqlite_file_is_rebuilt(tmp_path: Path) -> None:
    (tmp_path / STATE_DIR).mkdir()
    db = sqlite3.connect(tmp_path / STATE_DIR / CACHE_NAME)
    db.execute("CREATE TABLE entries (path TEXT, sha256 TEXT)")
    db.execute("INSERT INTO entries VALUES ('a.bin', 'x')")
    db.commit()
    db.close()
    cache = StatCache(tmp_path)
    assert cache.discarded_reason is not None
    assert cache.lookup("a.bin", StatKey(1, 2, 3, 4, 5)) is None
