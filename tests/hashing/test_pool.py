"""The hashing pool: largest files first, errors per file, and files grouped into batches by bytes and count."""

from __future__ import annotations

import os
from pathlib import Path

from hubrelease.hashing import HashJob, StatKey, hash_files, sha256_file
from hubrelease.hashing.pool import BATCH_BYTES, BATCH_FILES, batches


def test_pool_hashes_largest_first_and_reports_errors(tmp_path: Path) -> None:
    sizes = {"small": 10, "big": 3 << 20, "mid": 1 << 20}
    jobs = []
    for name, size in sizes.items():
        path = tmp_path / name
        path.write_bytes(os.urandom(size))
        jobs.append(HashJob(name, path, StatKey.of(os.stat(path))))
    gone = tmp_path / "gone"
    gone.write_bytes(b"x")
    jobs.append(HashJob("gone", gone, StatKey.of(os.stat(gone))))
    gone.unlink()
    results = hash_files(jobs, threads=2)
    for name in sizes:
        assert results[name].sha256 == sha256_file(tmp_path / name)
    assert results["gone"].sha256 is None
    assert results["gone"].error == "No such file or directory"


def test_batches_put_large_files_alone_and_small_ones_together_biggest_first() -> None:
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
