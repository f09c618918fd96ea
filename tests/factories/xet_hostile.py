"""Xet bodies a hostile client builds by hand: a xorb of many tiny chunks, and a shard whose one file
names that xorb's chunks over and over (48 bytes a term), to make a check cost more than its size."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

from hubrelease_loopback import xetformat


@dataclass(frozen=True)
class Xorb:
    """A xorb as uploaded: its name (Xet hex), body, and (raw hash, size) of each chunk."""

    name: str
    body: bytes
    chunks: list[tuple[bytes, int]]


def tiny_chunk_xorb(count: int, size: int = 1) -> Xorb:
    """``count`` stored (uncompressed) chunks of ``size`` distinct bytes each."""
    body, chunks = b"", []
    for n in range(count):
        data = n.to_bytes(8, "little")[:size].ljust(size, b"\0")
        header = bytes([0]) + size.to_bytes(3, "little") + bytes([0]) + size.to_bytes(3, "little")
        body += header + data
        chunks.append((xetformat.chunk_hash(data), size))
    return Xorb(xetformat.hash_hex(xetformat.aggregated_hash(chunks)), body, chunks)


def _raw(name: str) -> bytes:
    """The 32 bytes a shard stores for a hash written as Xet hex (``xetformat.hash_hex`` inverted)."""
    return b"".join(bytes.fromhex(name[i : i + 16])[::-1] for i in range(0, 64, 16))


def repeating_shard(xorb: Xorb, terms: int) -> bytes:
    """A shard of one file whose ``terms`` terms each name every chunk of ``xorb``: its Xet hash is
    the true one (the checks pass until the sha256, which is made up)."""
    size = sum(n for _, n in xorb.chunks)
    file_hash = xetformat.file_hash(xorb.chunks * terms)
    record = file_hash + struct.pack("<II", xetformat.FLAG_METADATA_EXT, terms) + bytes(8)
    term = _raw(xorb.name) + struct.pack("<IIII", 0, size, 0, len(xorb.chunks))
    bookend = xetformat.BOOKEND + bytes(16)
    files = record + term * terms + os.urandom(32) + bytes(16) + bookend
    return xetformat.SHARD_HEADER_TAG + bytes(16) + files + bookend
