"""Upload bodies into files at the machine's speed: received once, written once, hashed alongside.

Measured against a raw socket copy and single-stream ``openssl dgst -sha256`` by
``bench/hub_ingest_bench.py`` (results in ``bench/RESULTS.md``).
"""

from __future__ import annotations

import hashlib
import os
import queue
import threading
from collections.abc import Iterable
from typing import Protocol

INGEST_BUFFER = 4 << 20
INGEST_BUFFERS = 3


class Readable(Protocol):
    """A body to ingest: ``readinto`` fills (part of) a buffer and says how much, 0 at the end."""

    def readinto(self, view: memoryview, /) -> int: ...


class Chunks:
    """``Readable`` over pieces of bytes (multipart parts in order, a test helper's one blob)."""

    def __init__(self, pieces: Iterable[bytes]) -> None:
        self._pieces = iter(pieces)
        self._current = memoryview(b"")

    def readinto(self, view: memoryview, /) -> int:
        while not self._current:
            piece = next(self._pieces, None)
            if piece is None:
                return 0
            self._current = memoryview(piece)
        count = min(len(view), len(self._current))
        view[:count] = self._current[:count]
        self._current = self._current[count:]
        return count


def ingest(source: Readable, fd: int, size: int) -> tuple[int, str]:
    """Copy ``source`` into ``fd``, sha256 it as it arrives; returns (bytes read, hex digest).

    Each buffer is filled from the socket once (``recv_into``), written once (``os.write``) and
    hashed on a second thread while the next one fills, so an upload costs about the slower of
    receive + write and sha256 (hashlib drops the GIL), with no copy in Python and one queue hand-off
    per 4 MiB. At most ``size + 1`` bytes are read: a longer body is seen without reading it all.
    """
    digest = hashlib.sha256()
    free: queue.Queue[memoryview] = queue.Queue()
    for _ in range(INGEST_BUFFERS):
        free.put(memoryview(bytearray(INGEST_BUFFER)))
    filled: queue.Queue[tuple[memoryview, int] | None] = queue.Queue()

    def hash_filled() -> None:
        while (item := filled.get()) is not None:
            view, count = item
            digest.update(view[:count])
            free.put(view)

    hasher = threading.Thread(target=hash_filled, name="loopback-hub-sha256", daemon=True)
    hasher.start()
    received = 0
    try:
        while received <= size:
            view = free.get()
            count = 0
            room = min(len(view), size + 1 - received)
            while count < room and (got := source.readinto(view[count:room])):
                count += got
            if not count:
                break
            filled.put((view, count))
            written = 0
            while written < count:
                written += os.write(fd, view[written:count])
            received += count
    finally:
        filled.put(None)
        hasher.join()
    return received, digest.hexdigest()
