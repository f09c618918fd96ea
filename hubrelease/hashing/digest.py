"""Hashing one file: SHA-256 through hashlib (OpenSSL) with a reused 1 MiB ``readinto`` buffer.

1 MiB is past the point where syscalls stop mattering and hashlib releases the GIL for updates
this large, so several files hash in parallel threads (see ``pool``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

CHUNK_SIZE = 1 << 20


def sha256_file(path: str | Path, on_bytes: Callable[[int], None] | None = None) -> str:
    """Hex SHA-256 of a file's content; ``on_bytes`` is told about every chunk (for progress)."""
    digest = hashlib.sha256()
    buffer = bytearray(CHUNK_SIZE)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as handle:
        while True:
            count = handle.readinto(buffer)
            if not count:
                break
            digest.update(view[:count])
            if on_bytes is not None:
                on_bytes(count)
    return digest.hexdigest()
