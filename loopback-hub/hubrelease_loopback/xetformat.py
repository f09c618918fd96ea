"""Xet wire formats the loopback Hub must read: chunk hashes, xorbs, shards (no writer, no chunker).

hf_xet (Rust) is the writer; this module only checks what it sends. Primitives come from real
libraries (``blake3`` keyed hashing, ``lz4`` frames); the byte layouts and keys below mirror
huggingface/xet-core, cited per item (paths under ``xet_core_structures/src/``):

- chunk hash: blake3 keyed with ``DATA_KEY``; internal nodes keyed with ``INTERNAL_NODE_KEY``
  over lines ``"{hex} : {size}\\n"`` (``merklehash/data_hash.rs``, ``aggregated_hashes.rs``);
- the aggregated tree: groups cut after a node whose last u64 is 0 mod 4, 2 to 9 children
  (``aggregated_hashes.rs: next_merge_cut``); xorb hash = the root; file hash = blake3 keyed with 32
  zero bytes over the root (``file_hash``);
- hex form: each of the four little-endian u64 words printed as 16 hex digits (``DataHash::hex``);
- xorb: 8-byte chunk headers (version, 3-byte LE compressed length, scheme, 3-byte LE raw length)
  then the data, until the ``XETBLOB`` footer (``xorb_object/xorb_chunk_format.rs``); schemes 0 none,
  1 LZ4 frame, 2 byte-grouped-by-4 then LZ4 (``compression_scheme.rs``, ``byte_grouping/bg4.rs``);
- shard: 48-byte header, file-info section of 48-byte records closed by an all-0xFF bookend, then
  the xorb-info section likewise (``metadata_shard/shard_format.rs``, ``file_structs.rs``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from typing import BinaryIO

import blake3
import lz4.frame
import numpy as np

DATA_KEY = bytes(
    [
        102,
        151,
        245,
        119,
        91,
        149,
        80,
        222,
        49,
        53,
        203,
        172,
        165,
        151,
        24,
        28,
        157,
        228,
        33,
        16,
        155,
        235,
        43,
        88,
        180,
        208,
        176,
        75,
        147,
        173,
        242,
        41,
    ]
)
INTERNAL_NODE_KEY = bytes(
    [
        1,
        126,
        197,
        199,
        165,
        71,
        41,
        150,
        253,
        148,
        102,
        102,
        180,
        138,
        2,
        230,
        93,
        221,
        83,
        111,
        55,
        199,
        109,
        210,
        248,
        99,
        82,
        230,
        74,
        83,
        113,
        63,
    ]
)
ZERO_KEY = bytes(32)
XORB_FOOTER_IDENT = b"XETBLOB"
SHARD_HEADER_TAG = bytes(
    [*b"HFRepoMetaData", 0, 85, 105, 103, 69, 106, 123, 129, 87, 131, 165, 189, 217, 92, 205, 209, 74, 169]
)
SHARD_HEADER_SIZE = 48
RECORD = 48
BOOKEND = b"\xff" * 32
FLAG_VERIFICATION = 1 << 31
FLAG_METADATA_EXT = 1 << 30
MAX_CHUNK = 128 * 1024  # TARGET_CHUNK_SIZE (64 KiB) * MAXIMUM_CHUNK_MULTIPLIER (2), xorb_object/constants.rs
MAX_XORB_CHUNKS = 8 * 1024  # xorb_object/constants.rs:22, where hf_xet cuts a xorb
MAX_XORB_RAW = 64 * 1024 * 1024  # MAX_XORB_BYTES, xorb_object/constants.rs:17: a xorb's decoded bytes
REPEAT = 4
"""How many times over a shard may name the chunks it names (a file holding a block four times): past
it, the bytes and chunks it names beyond one ``MAX_CHUNK`` chunk per term are refused unread."""
INDEX_CACHE = 16
"""Xorb chunk indexes the store keeps loaded (``XetStore.xorb_index``); ``shard_work_problem`` counts
a term whose xorb is not among the last ``INDEX_CACHE`` named as a fresh load of its index."""


class XetFormatError(ValueError):
    """Bytes that are not a valid xorb or shard; the message says what is wrong."""


def hash_hex(raw: bytes) -> str:
    """The Xet string form of a 32-byte hash (four little-endian u64 words, each as 16 hex digits)."""
    return "".join(raw[i : i + 8][::-1].hex() for i in range(0, 32, 8))


def chunk_hash(data: bytes) -> bytes:
    return blake3.blake3(data, key=DATA_KEY).digest()


def _merge(nodes: list[tuple[bytes, int]]) -> tuple[bytes, int]:
    text = "".join(f"{hash_hex(h)} : {size}\n" for h, size in nodes)
    return blake3.blake3(text.encode(), key=INTERNAL_NODE_KEY).digest(), sum(size for _, size in nodes)


def _next_cut(nodes: list[tuple[bytes, int]], start: int) -> int:
    remaining = len(nodes) - start
    if remaining <= 2:
        return len(nodes)
    end = start + min(9, remaining)
    for i in range(start + 2, end):
        if int.from_bytes(nodes[i][0][24:32], "little") % 4 == 0:
            return i + 1
    return end


def aggregated_hash(chunks: list[tuple[bytes, int]]) -> bytes:
    """Root of the aggregated tree over (hash, size) pairs: the xorb hash of its chunks."""
    if not chunks:
        return ZERO_KEY
    nodes = list(chunks)
    while len(nodes) > 1:
        merged, start = [], 0
        while start < len(nodes):
            cut = _next_cut(nodes, start)
            merged.append(_merge(nodes[start:cut]))
            start = cut
        nodes = merged
    return nodes[0][0]


def file_hash(chunks: list[tuple[bytes, int]]) -> bytes:
    """The Xet file id: the aggregated root, keyed-hashed again with a zero salt."""
    if not chunks:
        return ZERO_KEY
    return blake3.blake3(aggregated_hash(chunks), key=ZERO_KEY).digest()


def _bg4_regroup(grouped: bytes) -> bytes:
    """Undo the split of bytes into 4 interleaved groups (group k holds bytes k, k+4, k+8...)."""
    n = len(grouped)
    data = np.frombuffer(grouped, dtype=np.uint8)
    out = np.empty(n, dtype=np.uint8)
    start = 0
    for k in range(4):
        size = n // 4 + (1 if n % 4 > k else 0)
        out[k::4] = data[start : start + size]
        start += size
    return out.tobytes()


def decode_chunk(scheme: int, raw_length: int, payload: bytes) -> bytes:
    if scheme == 0:
        data = payload
    elif scheme in (1, 2):
        # Bounded before allocation: one byte past the header's length proves a lie, where a plain
        # decompress() allocates whatever the frame expands to (~255x its size: 8 hostile uploads
        # took the server from 71 to 533 MB RSS).
        try:
            data = lz4.frame.LZ4FrameDecompressor().decompress(payload, max_length=raw_length + 1)
        except RuntimeError as exc:
            raise XetFormatError(f"chunk does not decompress: {exc}") from None
        if scheme == 2:
            data = _bg4_regroup(data)
    else:
        raise XetFormatError(f"unknown chunk compression scheme {scheme}")
    if len(data) != raw_length:
        raise XetFormatError(f"chunk decodes to {len(data)} bytes, its header says {raw_length}")
    return data


@dataclass(frozen=True)
class XorbChunk:
    """Where one chunk sits in a xorb: byte offset of its header, stored length, raw length, hash."""

    offset: int
    stored: int
    size: int
    hash: bytes


def read_chunk(handle: BinaryIO) -> tuple[int, int, bytes] | None:
    """The next chunk (scheme, raw length, stored payload), or None at the xorb footer or the end."""
    header = handle.read(8)
    if len(header) < 8 or header.startswith(XORB_FOOTER_IDENT):
        return None
    version, scheme = header[0], header[4]
    stored = int.from_bytes(header[1:4], "little")
    size = int.from_bytes(header[5:8], "little")
    if version != 0 or size > MAX_CHUNK or stored > 2 * MAX_CHUNK:
        raise XetFormatError(f"bad chunk header {header.hex()}")
    payload = handle.read(stored)
    if len(payload) != stored:
        raise XetFormatError("xorb ends inside a chunk")
    return scheme, size, payload


def _check_layout(handle: BinaryIO) -> None:
    """Refuse a xorb of more chunks or decoded bytes than hf_xet ever puts in one, from its chunk
    headers alone (payloads are skipped, nothing is decoded), then rewind: decoding it costs at most
    ``MAX_XORB_RAW`` bytes and ``MAX_XORB_CHUNKS`` hashes, however small the upload."""
    chunks = raw = 0
    while len(header := handle.read(8)) == 8 and not header.startswith(XORB_FOOTER_IDENT):
        chunks += 1
        raw += int.from_bytes(header[5:8], "little")
        if chunks > MAX_XORB_CHUNKS:
            raise XetFormatError(f"xorb holds more than {MAX_XORB_CHUNKS} chunks")
        if raw > MAX_XORB_RAW:
            raise XetFormatError(f"xorb decodes to more than {MAX_XORB_RAW} bytes")
        handle.seek(int.from_bytes(header[1:4], "little"), 1)
    handle.seek(0)


def scan_xorb(handle: BinaryIO) -> list[XorbChunk]:
    """Decode every chunk of a xorb, hashing each; the caller compares ``aggregated_hash``."""
    _check_layout(handle)
    chunks: list[XorbChunk] = []
    offset = 0
    while (found := read_chunk(handle)) is not None:
        scheme, size, payload = found
        chunks.append(
            XorbChunk(offset, 8 + len(payload), size, chunk_hash(decode_chunk(scheme, size, payload)))
        )
        offset += 8 + len(payload)
    if not chunks:
        raise XetFormatError("xorb holds no chunks")
    return chunks


def iter_chunks(handle: BinaryIO, first: XorbChunk, count: int) -> Iterator[bytes]:
    """The raw bytes of ``count`` consecutive chunks starting at ``first``."""
    handle.seek(first.offset)
    for _ in range(count):
        found = read_chunk(handle)
        if found is None:
            raise XetFormatError("xorb ends before the chunk range")
        yield decode_chunk(*found)


@dataclass(frozen=True)
class Segment:
    """One term of a file: chunks ``[start, end)`` of ``xorb``, ``size`` raw bytes."""

    xorb: str
    start: int
    end: int
    size: int


@dataclass
class ShardFile:
    """One file described by a shard: its Xet hash, its terms and the sha256 the client computed."""

    file_hash: str
    segments: list[Segment] = field(default_factory=list)
    sha256: str | None = None

    @property
    def size(self) -> int:
        return sum(s.size for s in self.segments)


def _records(data: bytes, offset: int) -> Iterator[tuple[int, bytes]]:
    while True:
        record = data[offset : offset + RECORD]
        if len(record) < RECORD:
            raise XetFormatError("shard ends before its section bookend")
        yield offset, record
        offset += RECORD


@dataclass(frozen=True)
class ShardXorb:
    """One xorb's record in a shard's xorb section: its hash, chunk hashes, and the raw record bytes."""

    xorb: str
    chunk_hashes: list[bytes]
    raw: bytes


def parse_shard(data: bytes) -> tuple[list[ShardFile], list[ShardXorb]]:
    """The files of an uploaded shard, and its xorb section (served back for global dedup)."""
    if len(data) < SHARD_HEADER_SIZE or data[:32] != SHARD_HEADER_TAG:
        raise XetFormatError("not a Xet shard (wrong header tag)")
    files: list[ShardFile] = []
    records = _records(data, SHARD_HEADER_SIZE)
    for offset, record in records:
        if record[:32] == BOOKEND:
            return files, _xorb_section(data, offset + RECORD)
        flags, entries = struct.unpack_from("<II", record, 32)
        item = ShardFile(hash_hex(record[:32]))
        for _ in range(entries):
            entry = next(records)[1]
            _, size, start, end = struct.unpack_from("<IIII", entry, 32)
            if end <= start:
                raise XetFormatError(f"empty chunk range in file {item.file_hash}")
            item.segments.append(Segment(hash_hex(entry[:32]), start, end, size))
        if flags & FLAG_VERIFICATION:
            for _ in range(entries):
                next(records)
        if flags & FLAG_METADATA_EXT:
            item.sha256 = hash_hex(next(records)[1][:32])  # stored as a MerkleHash, like the others
        files.append(item)
    raise XetFormatError("shard has no file section bookend")  # pragma: no cover - _records raises first


def _xorb_section(data: bytes, offset: int) -> list[ShardXorb]:
    xorbs: list[ShardXorb] = []
    records = _records(data, offset)
    for start, record in records:
        if record[:32] == BOOKEND:
            return xorbs
        (entries,) = struct.unpack_from("<I", record, 36)
        hashes = [next(records)[1][:32] for _ in range(entries)]
        xorbs.append(ShardXorb(hash_hex(record[:32]), hashes, data[start : start + RECORD * (entries + 1)]))
    raise XetFormatError("shard has no xorb section bookend")  # pragma: no cover - _records raises first


def _spans(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """``spans`` clipped to ``[0, length)`` and merged: the distinct chunk ranges they cover."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted((max(a, 0), min(b, length)) for a, b in spans):
        if start >= end:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def shard_work_problem(files: list[ShardFile], chunk_sizes: dict[str, list[int]]) -> str | None:
    """Why checking ``files`` would cost more than a linear bound (None: it does not).

    ``chunk_sizes`` holds the raw chunk sizes of each xorb the files name that the uploader reaches;
    terms naming any other are not counted (their file is refused at that term, at no cost), so the
    answer never depends on what other tenants hold. Checking a file loads the index of each xorb
    its terms name, hashes each chunk reference and decodes each byte it describes; a shard may
    name the same chunks many times over (terms are 48 bytes), so each of the three is bounded by
    ``REPEAT`` times what the distinct chunks named hold, plus one index load, one chunk and
    ``MAX_CHUNK`` bytes per term (a run of one repeated chunk: a file of zeros).
    """
    terms = refs = described = loads = 0
    named: dict[str, list[tuple[int, int]]] = {}
    recent: dict[str, None] = {}
    for item in files:
        for term in item.segments:
            if term.xorb not in chunk_sizes:
                continue
            terms += 1
            refs += term.end - term.start
            described += term.size
            named.setdefault(term.xorb, []).append((term.start, term.end))
            if term.xorb in recent:
                del recent[term.xorb]
            else:
                loads += len(chunk_sizes[term.xorb])
            recent[term.xorb] = None
            if len(recent) > INDEX_CACHE:
                del recent[next(iter(recent))]
    distinct_chunks = distinct_bytes = indexes = 0
    for xorb, spans in named.items():
        sizes = chunk_sizes[xorb]
        indexes += len(sizes)
        offsets = [0, *accumulate(sizes)]
        for start, end in _spans(spans, len(sizes)):
            distinct_chunks += end - start
            distinct_bytes += offsets[end] - offsets[start]
    if refs > REPEAT * distinct_chunks + terms:
        return f"its terms name {refs} chunks, more than {REPEAT} times the {distinct_chunks} distinct ones"
    if described > REPEAT * distinct_bytes + terms * MAX_CHUNK:
        return f"its terms describe {described} bytes, more than {REPEAT} times the {distinct_bytes} distinct ones"
    if loads > REPEAT * indexes + terms:
        return f"its terms name {len(named)} xorbs in an order that reads {loads} index entries"
    return None


def is_dedup_eligible(chunk: bytes) -> bool:
    """A chunk the client probes global dedup for: last u64 of its hash 0 mod 1024 (constants.rs)."""
    return int.from_bytes(chunk[24:32], "little") % 1024 == 0


def dedup_shard(xorbs: list[bytes], now: int) -> bytes:
    """A shard holding only xorb records, as the CAS answers a dedup probe (``streaming_shard.rs``
    ``serialize_xorb_subset_with_expiry``): header, empty file section, the records, empty lookup
    tables and the 200-byte footer."""
    bookend = BOOKEND + bytes(16)
    body = bookend + b"".join(xorbs) + bookend
    footer_start = SHARD_HEADER_SIZE + len(body)
    stored = sum(struct.unpack_from("<I", raw, 44)[0] for raw in xorbs)
    raw_bytes = sum(struct.unpack_from("<I", raw, 40)[0] for raw in xorbs)
    footer = struct.pack("<9Q", 1, SHARD_HEADER_SIZE, SHARD_HEADER_SIZE + RECORD, *[footer_start, 0] * 3)
    footer += ZERO_KEY + struct.pack("<2Q", now, now + 24 * 3600) + bytes(48)
    footer += struct.pack("<4Q", stored, 0, raw_bytes, footer_start)
    header = SHARD_HEADER_TAG + struct.pack("<2Q", 2, len(footer))
    return header + body + footer
