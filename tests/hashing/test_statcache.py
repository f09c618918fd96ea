"""The stat cache trusts an entry only while (dev, ino, size, mtime, ctime) match and the entry is not racy."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from hubrelease.fsutil import STATE_DIR
from hubrelease.hashing import HashJob, StatCache, StatKey, hash_files, sha256_file
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


def test_pool_hashes_largest_first_and_reports_errors(tmp_path: Path) -> None:
    sizes = {"small": 10, "big": 3 << 20, "mid": 1 << 20}
    jobs = []
    for name, size in sizes.items():
        path = tmp_path / name
        path.write_bytes(os.urandom(size))
        jobs.append(HashJob(name, path, _key(path)))
    gone = tmp_path / "gone"
    gone.write_bytes(b"x")
    jobs.append(HashJob("gone", gone, _key(gone)))
    gone.unlink()
    results = hash_files(jobs, threads=2)
    for name in sizes:
        assert results[name].sha256 == sha256_file(tmp_path / name)
    assert results["gone"].sha256 is None
    assert results["gone"].error == "No such file or directory"


def test_batches_put_large_files_alone_and_small_ones_together_biggest_first() -> None:
    from hubrelease.hashing.pool import BATCH_BYTES, BATCH_FILES, batches

    def job(name: str, size: int) -> HashJob:
        return HashJob(name, name, StatKey(0, 0, size, 0, 0))

    jobs = [job(f"small{i}", 4096) for i in range(BATCH_FILES + 10)]
    jobs += [job("huge", 4 * BATCH_BYTES), job("big", BATCH_BYTES), job("mid", BATCH_BYTES // 2)]
    tasks = batches(jobs)
    assert [[j.name for j in t] for t in tasks[:2]] == [["huge"], ["big"]]
    assert sorted(j.name for t in tasks for j in t) == sorted(j.name for j in jobs)  # each file once
    sizes = [sum(j.key.size for j in t) for t in tasks]
    assert sizes == sorted(sizes, reverse=True)
    assert all(
        len(t) <= BATCH_FILES and (len(t) == 1 or sum(j.key.size for j in t) <= BATCH_BYTES) for t in tasks
    )
    assert len(tasks) < 10  # 268 small files are a few tasks, not 268
