"""Hashing one file: SHA-256 through hashlib (OpenSSL) with a reused 1 MiB ``readinto`` buffer.

1 MiB is past the point where syscalls stop mattering and hashlib releases the GIL for updates
this large, so several files hash in parallel threads (see ``pool``). The buffer is an anonymous
``mmap``, so it is page-aligned: a ``bytearray`` of that size starts 16 bytes into a page, and on
the machine in bench/RESULTS.md that made the kernel's copy into it, and so the whole hash, 1.6x
slower. (Mapping the *file* instead would skip the copy, but a file truncated while mapped kills
the process with SIGBUS.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # hashlib (OpenSSL) and mmap load on the first hash: a warm verify hashes nothing
    import mmap

CHUNK_SIZE = 1 << 20


def read_buffer() -> mmap.mmap:
    """A page-aligned ``CHUNK_SIZE`` buffer for ``sha256_file`` (the pool keeps one per thread)."""
    import mmap

    return mmap.mmap(-1, CHUNK_SIZE)


def sha256_file(
    path: str | Path | int, on_bytes: Callable[[int], None] | None = None, *, buffer: mmap.mmap | None = None
) -> str:
    """Hex SHA-256 of a file's content; ``on_bytes`` is told about every chunk (for progress).

    ``path`` may be an open descriptor (read from its offset, left open). ``buffer`` (from
    ``read_buffer``) is reused instead of mapping a fresh one for this file.
    """
    import hashlib

    digest = hashlib.sha256()
    with contextlib.ExitStack() as stack:
        if buffer is None:
            buffer = stack.enter_context(read_buffer())
        handle = stack.enter_context(open(path, "rb", buffering=0, closefd=not isinstance(path, int)))
        view = memoryview(buffer)
        try:
            while True:
                count = handle.readinto(view)
                if not count:
                    break
                digest.update(view[:count])
                if on_bytes is not None:
                    on_bytes(count)
        finally:
            view.release()
    return digest.hexdigest()
