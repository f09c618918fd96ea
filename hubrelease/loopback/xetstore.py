"""Disk-backed Xet CAS of the loopback Hub: verified xorbs, files rebuilt from shards, access tokens.

Layout under the Hub's root (next to ``store.py``'s)::

    xet/xorbs/<h[:2]>/<h>          a xorb as uploaded, kept only once its chunks hashed to <h>
    xet/xorbs/<h[:2]>/<h>.json     its chunk index: [offset, stored length, raw length, chunk hash]
    xet/files/<h[:2]>/<h>.json     a file: sha256, size and terms [xorb, first chunk, end chunk, bytes]
    xet/sha256/<s[:2]>/<s>         the Xet hash of the file whose sha256 is <s>
    xet/xorbs/<h[:2]>/<h>.shard    the xorb's record from the shard that registered it (dedup answers)
    xet/chunks/<c[:2]>/<c>         the xorb holding chunk <c>, for dedup-eligible and file-first chunks

A shard makes its files visible only after each one is rebuilt from its xorbs, its Xet hash
recomputed from the chunk hashes and its sha256 checked; the rebuilt bytes go into the LFS store
(``HubStore.put_lfs``), so a commit's ``lfsFile`` line finds them exactly as after an LFS upload.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hubrelease.fsutil import atomic_write_bytes, atomic_write_text
from hubrelease.loopback import xetformat
from hubrelease.loopback.store import HubStore, RepoKey, StoreError
from hubrelease.loopback.xetformat import Segment, XetFormatError, XorbChunk

MAX_XORB_BYTES = 80 * 1024 * 1024  # MAX_XORB_BYTES (64 MiB) of chunk data plus headers and footer
MAX_SHARD_BYTES = 64 * 1024 * 1024
TOKEN_TTL = 3600


@dataclass(frozen=True)
class XetToken:
    """A CAS access token minted by a xet-read/write-token route: which repo, which scope, until when."""

    repo: RepoKey
    write: bool
    expires: int
    epoch: int


class XetStore:
    """Xorbs, reconstructions and tokens; thread-safe."""

    def __init__(self, store: HubStore) -> None:
        self.store = store
        self.root = store.root / "xet"
        for sub in ("xorbs", "files", "sha256", "chunks"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self._tokens: dict[str, XetToken] = {}
        self._lock = threading.Lock()

    # -- tokens ------------------------------------------------------------------------------

    def mint(self, repo: RepoKey, write: bool, epoch: int) -> tuple[str, int]:
        token = f"xet_{secrets.token_hex(20)}"
        expires = int(time.time()) + TOKEN_TTL
        with self._lock:
            self._tokens[token] = XetToken(repo, write, expires, epoch)
        return token, expires

    def check(self, authorization: str, write: bool, epoch: int) -> XetToken:
        """The token behind an ``Authorization: Bearer`` header, or a 401 (unknown, expired) / 403."""
        value = authorization.removeprefix("Bearer ").strip()
        with self._lock:
            token = self._tokens.get(value)
        if token is None or token.expires <= time.time() or token.epoch != epoch:
            raise StoreError(401, "Xet access token missing, invalid or expired")
        if write and not token.write:
            raise StoreError(403, "this Xet token is read-only")
        return token

    # -- paths -------------------------------------------------------------------------------

    def _path(self, kind: str, digest: str, suffix: str = "") -> Path:
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise StoreError(400, f"invalid hash {digest!r}: expected 64 lowercase hex characters")
        return self.store.inside(self.root / kind / digest[:2] / f"{digest}{suffix}")

    def has_xorb(self, xorb: str) -> bool:
        return self._path("xorbs", xorb, ".json").is_file()

    def xorb_path(self, xorb: str) -> Path:
        return self._path("xorbs", xorb)

    def xorb_index(self, xorb: str) -> list[XorbChunk]:
        path = self._path("xorbs", xorb, ".json")
        if not path.is_file():
            raise StoreError(400, f"xorb {xorb} was not uploaded")
        return [XorbChunk(o, s, n, bytes.fromhex(h)) for o, s, n, h in json.loads(path.read_text())]

    def file_record(self, file_hash: str) -> dict[str, Any] | None:
        path = self._path("files", file_hash, ".json")
        if not path.is_file():
            return None
        data: dict[str, Any] = json.loads(path.read_text())
        return data

    def xet_hash_for(self, sha256: str) -> str | None:
        """The Xet hash of the LFS object ``sha256`` when it arrived through Xet."""
        path = self._path("sha256", sha256)
        return path.read_text().strip() if path.is_file() else None

    # -- uploads -----------------------------------------------------------------------------

    def put_xorb(self, xorb: str, chunks: Iterable[bytes]) -> bool:
        """Stream a xorb to disk, decode and hash every chunk, keep it only if it hashes to ``xorb``."""
        target = self.xorb_path(xorb)
        fd, tmp = tempfile.mkstemp(dir=self.store.tmp_dir(), prefix="xorb.")
        try:
            received = 0
            with os.fdopen(fd, "wb") as handle:
                for piece in chunks:
                    received += len(piece)
                    if received > MAX_XORB_BYTES:
                        raise StoreError(413, f"xorb larger than {MAX_XORB_BYTES} bytes")
                    handle.write(piece)
            with open(tmp, "rb") as handle:
                try:
                    index = xetformat.scan_xorb(handle)
                except XetFormatError as exc:
                    raise StoreError(400, f"invalid xorb {xorb}: {exc}") from None
            actual = xetformat.hash_hex(xetformat.aggregated_hash([(c.hash, c.size) for c in index]))
            if actual != xorb:
                raise StoreError(400, f"xorb body hashes to {actual}, not {xorb}")
            if self.has_xorb(xorb):
                return False
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, target)
            rows = [[c.offset, c.stored, c.size, c.hash.hex()] for c in index]
            atomic_write_text(self._path("xorbs", xorb, ".json"), json.dumps(rows))
            return True
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def put_shard(self, data: bytes) -> int:
        """Register every file of a shard after rebuilding and checking it; returns how many were new."""
        try:
            files, xorbs = xetformat.parse_shard(data)
        except XetFormatError as exc:
            raise StoreError(400, f"invalid shard: {exc}") from None
        new = 0
        for item in files:
            if self.file_record(item.file_hash) is None:
                self._register(item)
                new += 1
        firsts = {s.xorb: s.start for item in files for s in item.segments[:1]}
        for xorb in xorbs:
            self._index_for_dedup(xorb, firsts.get(xorb.xorb))
        return new

    def _index_for_dedup(self, xorb: xetformat.ShardXorb, first_chunk: int | None) -> None:
        """Keep a xorb's shard record and index its dedup-eligible chunks (and files' first chunks)."""
        if not self.has_xorb(xorb.xorb) or [c.hash for c in self.xorb_index(xorb.xorb)] != xorb.chunk_hashes:
            return  # the record must describe the xorb the CAS holds, or it is not served back
        atomic_write_bytes(self._path("xorbs", xorb.xorb, ".shard"), xorb.raw)
        for n, chunk in enumerate(xorb.chunk_hashes):
            if n == first_chunk or xetformat.is_dedup_eligible(chunk):
                atomic_write_text(self._path("chunks", xetformat.hash_hex(chunk)), xorb.xorb)

    def dedup_shard(self, chunk: str) -> bytes | None:
        """The shard answering a global dedup probe for ``chunk``, or None if no stored xorb has it."""
        path = self._path("chunks", chunk)
        if not path.is_file():
            return None
        record = self._path("xorbs", path.read_text().strip(), ".shard")
        return xetformat.dedup_shard([record.read_bytes()], int(time.time())) if record.is_file() else None

    def _register(self, item: xetformat.ShardFile) -> None:
        if item.sha256 is None:
            raise StoreError(400, f"shard file {item.file_hash} carries no sha256 metadata")
        pairs: list[tuple[bytes, int]] = []
        for segment in item.segments:
            index = self.xorb_index(segment.xorb)
            chosen = index[segment.start : segment.end]
            if segment.end > len(index) or sum(c.size for c in chosen) != segment.size:
                raise StoreError(400, f"shard term {segment} does not match xorb {segment.xorb}")
            pairs.extend((c.hash, c.size) for c in chosen)
        actual = xetformat.hash_hex(xetformat.file_hash(pairs))
        if actual != item.file_hash:
            raise StoreError(400, f"shard file {item.file_hash}: its chunks hash to {actual}")
        # put_lfs hashes the rebuilt bytes and refuses them unless they are the claimed sha256.
        self.store.put_lfs(item.sha256, item.size, self.rebuild(item.segments))
        record = {
            "sha256": item.sha256,
            "size": item.size,
            "segments": [[s.xorb, s.start, s.end, s.size] for s in item.segments],
        }
        atomic_write_text(self._path("files", item.file_hash, ".json"), json.dumps(record))
        atomic_write_text(self._path("sha256", item.sha256), item.file_hash)

    def rebuild(self, segments: list[Segment]) -> Iterator[bytes]:
        """The file's bytes, decoded chunk by chunk from its xorbs."""
        for segment in segments:
            index = self.xorb_index(segment.xorb)
            with self.xorb_path(segment.xorb).open("rb") as handle:
                try:
                    yield from xetformat.iter_chunks(
                        handle, index[segment.start], segment.end - segment.start
                    )
                except XetFormatError as exc:
                    raise StoreError(500, f"stored xorb {segment.xorb} is damaged: {exc}") from None

    # -- downloads ---------------------------------------------------------------------------

    def reconstruction(self, file_hash: str, first: int, last: int | None, fetch_url: str) -> dict[str, Any]:
        """The V1 reconstruction of bytes ``first..last`` (inclusive) of a file: terms plus fetch ranges."""
        record = self.file_record(file_hash)
        if record is None:
            raise StoreError(404, f"file {file_hash} not found")
        size = int(record["size"])
        if first >= size or (last is not None and last < first):
            raise StoreError(416, f"range starts at {first}, the file has {size} bytes")
        end = size - 1 if last is None else min(last, size - 1)
        terms: list[dict[str, Any]] = []
        wanted: dict[str, list[tuple[int, int]]] = {}
        offset_into_first = 0
        position = 0
        for xorb, start, stop, length in record["segments"]:
            if position + length > first and position <= end:
                if not terms:
                    offset_into_first = first - position
                terms.append(
                    {"hash": xorb, "unpacked_length": length, "range": {"start": start, "end": stop}}
                )
                wanted.setdefault(xorb, []).append((start, stop))
            position += length
        fetch = {xorb: self._fetch_ranges(xorb, ranges, fetch_url) for xorb, ranges in wanted.items()}
        return {"offset_into_first_range": offset_into_first, "terms": terms, "fetch_info": fetch}

    def _fetch_ranges(self, xorb: str, ranges: list[tuple[int, int]], fetch_url: str) -> list[dict[str, Any]]:
        """Disjoint chunk ranges covering every term of one xorb (a file may repeat a chunk, e.g. zeros)."""
        merged: list[list[int]] = []
        for start, stop in sorted(ranges):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], stop)
            else:
                merged.append([start, stop])
        index = self.xorb_index(xorb)
        return [
            {
                "range": {"start": start, "end": stop},
                "url": f"{fetch_url}/{xorb}",
                "url_range": {
                    "start": index[start].offset,
                    "end": index[stop - 1].offset + index[stop - 1].stored - 1,
                },
            }
            for start, stop in merged
        ]
