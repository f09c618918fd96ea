"""Hashing many files: threads over all cores, largest first, small files batched, stat cache in front.

hashlib releases the GIL while it hashes a 1 MiB chunk, so threads use every core. Work is
scheduled here (``batches``); ``digest`` knows only how to hash one file.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from hubrelease.hashing.digest import read_buffer, sha256_file
from hubrelease.hashing.statcache import StatCache, StatKey
from hubrelease.progress import NULL_PROGRESS, Progress

if TYPE_CHECKING:
    import mmap


class HashJob(NamedTuple):
    """One file to hash: its name for the cache and reports, where it is, and its stat.

    A NamedTuple, as ``HashResult``: cheap to define on verify's warm path (see ``hubrelease.findings``).
    """

    name: str
    path: str | Path
    key: StatKey


class HashResult(NamedTuple):
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


BATCH_BYTES = 16 << 20
"""Files smaller than this are hashed in batches of about this many bytes (at most ``BATCH_FILES``)."""
BATCH_FILES = 256


def batches(jobs: Sequence[HashJob]) -> list[list[HashJob]]:
    """Large files one per task, small ones grouped; the biggest tasks first.

    Largest-first keeps every core busy to the end (a 4 GiB shard started last would leave the
    others idle); batching makes a thousand 4 KiB configs a few tasks instead of a thousand
    scheduling round trips, and the batches fill the gaps the large files leave.
    """
    tasks: list[list[HashJob]] = []
    batch: list[HashJob] = []
    batch_bytes = 0
    for job in sorted(jobs, key=lambda j: j.key.size, reverse=True):
        if job.key.size >= BATCH_BYTES:
            tasks.append([job])
            continue
        if batch and (batch_bytes + job.key.size > BATCH_BYTES or len(batch) >= BATCH_FILES):
            tasks.append(batch)
            batch, batch_bytes = [], 0
        batch.append(job)
        batch_bytes += job.key.size
    if batch:
        tasks.append(batch)
    return sorted(tasks, key=lambda task: sum(j.key.size for j in task), reverse=True)


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
    if not pending:  # every digest from the cache (a warm verify): no stamp, no threads
        return results
    from concurrent.futures import ThreadPoolExecutor

    # Stamped before the first byte is read, never after, on each file's own filesystem: see
    # statcache's module docstring.
    stamps = cache.stamps((job.key, job.path) for job in pending) if cache is not None else {}
    progress.start(sum(j.key.size for j in pending), "hashing")
    lock = threading.Lock()
    stop = threading.Event()

    def advance(count: int) -> None:
        if stop.is_set():
            raise _Stopped
        with lock:
            progress.advance(count)

    buffers: dict[int, mmap.mmap] = {}  # one read buffer per worker thread, reused for all its files

    def run(job: HashJob) -> tuple[HashResult, StatKey | None]:
        if stop.is_set():
            raise _Stopped
        buffer = buffers.get(threading.get_ident())
        if buffer is None:
            buffer = buffers[threading.get_ident()] = read_buffer()
        try:
            digest = sha256_file(job.path, advance, buffer=buffer)
            after = StatKey.of(os.stat(job.path))
        except OSError as exc:
            return HashResult(job.name, None, False, error=exc.strerror or str(exc)), None
        # Only cache a digest if the file did not change while it was being read.
        return HashResult(job.name, digest, from_cache=False), after if after == job.key else None

    def run_batch(batch: list[HashJob]) -> list[tuple[HashResult, StatKey | None]]:
        return [run(job) for job in batch]

    fresh: list[tuple[str, StatKey, str]] = []
    try:
        with ThreadPoolExecutor(max_workers=threads or default_jobs()) as pool:
            try:
                for batch in pool.map(run_batch, batches(pending)):
                    for result, key in batch:
                        results[result.name] = result
                        if key is not None and result.sha256 is not None:
                            fresh.append((result.name, key, result.sha256))
            except BaseException:
                stop.set()  # Ctrl-C: workers stop at their next 1 MiB chunk instead of finishing
                raise
    finally:
        progress.finish()
        for buffer in buffers.values():
            # Ctrl-C inside Thread.start() leaves a worker the pool never joins (CPython 3.11
            # concurrent/futures/thread.py:199-200 adds it to _threads only after start() returns):
            # its buffer may still be in use; it is freed with the thread, which stops at its next chunk.
            with contextlib.suppress(BufferError):
                buffer.close()
    if cache is not None:
        cache.store(fresh, stamps)
    return results
