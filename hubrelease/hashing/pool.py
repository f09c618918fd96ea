"""Hashing many files: threads over all cores, largest file first, with the stat cache in front.

Largest-first keeps the pool busy until the end (a 4 GiB shard started last would leave other
cores idle). Work is scheduled here; ``digest`` knows only how to hash one file.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from hubrelease.hashing.digest import sha256_file
from hubrelease.hashing.statcache import StatCache, StatKey
from hubrelease.progress import NULL_PROGRESS, Progress


@dataclass(frozen=True)
class HashJob:
    """One file to hash: its name for the cache and reports, where it is, and its stat."""

    name: str
    path: str | Path
    key: StatKey


@dataclass(frozen=True)
class HashResult:
    """The digest of one job, or the OS error that prevented it."""

    name: str
    sha256: str | None
    from_cache: bool
    error: str | None = None


class _Stopped(Exception):
    """Raised inside a worker once the caller was interrupted, so Ctrl-C is not held up by a 40 GB read."""


def default_jobs() -> int:
    """Threads to use by default: every core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def hash_files(
    jobs: Sequence[HashJob],
    *,
    threads: int | None = None,
    cache: StatCache | None = None,
    progress: Progress = NULL_PROGRESS,
) -> dict[str, HashResult]:
    """Digest every job (cache hits skip the read); results keyed by ``HashJob.name``."""
    results: dict[str, HashResult] = {}
    pending: list[HashJob] = []
    for job in jobs:
        cached = cache.lookup(job.name, job.key) if cache is not None else None
        if cached is not None:
            results[job.name] = HashResult(job.name, cached, from_cache=True)
        else:
            pending.append(job)
    pending.sort(key=lambda j: j.key.size, reverse=True)
    # Stamped before the first byte is read, never after: see statcache's module docstring.
    stamp_ns = cache.stamp() if cache is not None and pending else 0
    progress.start(sum(j.key.size for j in pending), "hashing")
    lock = threading.Lock()
    stop = threading.Event()

    def advance(count: int) -> None:
        if stop.is_set():
            raise _Stopped
        with lock:
            progress.advance(count)

    def run(job: HashJob) -> tuple[HashResult, StatKey | None]:
        if stop.is_set():
            raise _Stopped
        try:
            digest = sha256_file(job.path, advance)
            after = StatKey.of(os.stat(job.path))
        except OSError as exc:
            return HashResult(job.name, None, False, error=exc.strerror or str(exc)), None
        # Only cache a digest if the file did not change while it was being read.
        return HashResult(job.name, digest, from_cache=False), after if after == job.key else None

    fresh: list[tuple[str, StatKey, str]] = []
    try:
        with ThreadPoolExecutor(max_workers=threads or default_jobs()) as pool:
            try:
                for result, key in pool.map(run, pending):
                    results[result.name] = result
                    if key is not None and result.sha256 is not None:
                        fresh.append((result.name, key, result.sha256))
            except BaseException:
                stop.set()  # Ctrl-C: workers stop at their next 1 MiB chunk instead of finishing
                raise
    finally:
        progress.finish()
    if cache is not None:
        cache.store(fresh, stamp_ns)
    return results
