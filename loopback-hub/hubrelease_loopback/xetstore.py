"""Disk-backed Xet CAS of the loopback Hub: verified xorbs, files rebuilt from shards, access tokens.

Layout under the Hub's root (next to ``store.py``'s)::

    xet/xorbs/<h[:2]>/<h>          a xorb as uploaded, kept only once its chunks hashed to <h>
    xet/xorbs/<h[:2]>/<h>.json     its chunk index: [offset, stored length, raw length, chunk hash]
    xet/files/<h[:2]>/<h>.json     a file: sha256, size and terms [xorb, first chunk, end chunk, bytes]
    xet/sha256/<s[:2]>/<s>         the Xet hash of the file whose sha256 is <s>
    xet/lfs/<s[:2]>/<s>            the Xet hash of the plain LFS object <s>, computed on first ask
    xet/xorbs/<h[:2]>/<h>.shard    the xorb's record from the shard that registered it (dedup answers)
    xet/shards/<s[:2]>/<s>         the xorbs of the shard <s> (its sha256), one hash per line
    xet/chunks/<c[:2]>/<c>         the last shard naming chunk <c>, for dedup-eligible and file-first chunks
    xet/store-id                   16 random hex digits naming this root in the CAS URL (``xet.cas_url``)

A shard makes its files visible only after each one's Xet hash is recomputed from the chunk
hashes of xorbs the uploader reaches (its own uploads, or repos its token covers: the proof that it
holds every chunk) and its sha256 is checked on the bytes decoded from them. A Xet hash is bound to
the one sha256 and size it was first registered with: a later shard naming it must claim the same
(else 400), so a sha256 claim never makes another tenant's object reachable. Files are never written out again: the xorbs are their only
copy (``HubStore.object_size`` finds them for a commit's ``lfsFile`` line; resolve decodes them), so
a small shard naming the same chunks many times costs decoding, bounded by ``max_file``, not disk.

A dedup probe is answered as xet-core's reference CAS answers it (``xet_client/src/cas_client/
simulation/local_client.rs``: ``upload_shard`` maps each ``global_dedup_eligible_chunks()`` entry to
the shard, ``query_for_global_dedup_shard`` returns that shard's xorb section): with every xorb of the
shard that registered the chunk, not only the one holding it. hf_xet probes a file's first chunk and
then one chunk in ~1,024 (``file_deduplication.rs``), so a file spanning several xorbs, re-uploaded
without the first client's local shard cache, is deduplicated whole only with the whole shard.

Tenancy (``tenancy.py``): a xorb is reachable through the repo whose Xet token uploaded it, and a
file and its xorbs through the repo that registered or committed it. Dedup probes, reconstructions
and shards answer only for what the token's repo reaches, exactly as for a missing object, and ask
the tenancy index before anything else, so both cost the same lookup.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import secrets
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hf_xet

from hubrelease.fsutil import atomic_write_bytes, atomic_write_text
from hubrelease_loopback import xetformat
from hubrelease_loopback.auth import Grant, covers
from hubrelease_loopback.store import HubStore, RepoKey, StoreError
from hubrelease_loopback.tenancy import Kind
from hubrelease_loopback.upload_sink import BUFFER, Chunks, FileWriter, Readable, sink
from hubrelease_loopback.xetformat import Segment, XetFormatError, XorbChunk

MAX_XORB_BYTES = 80 * 1024 * 1024  # MAX_XORB_BYTES (64 MiB) of chunk data plus headers and footer
MAX_SHARD_BYTES = 64 * 1024 * 1024
TOKEN_TTL = 3600


UploadGrant = tuple[str, str, int, bool]
"""An open xorb upload grant: tenant, xorb hash, declared length, uploaded yet."""
MAX_OPEN_GRANTS = 10_000


class Grants:
    """Open xorb upload grants by id, the oldest dropped past ``MAX_OPEN_GRANTS``; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, UploadGrant] = {}

    def put(self, grant_id: str, grant: UploadGrant) -> None:
        with self._lock:
            if grant_id not in self._open and len(self._open) >= MAX_OPEN_GRANTS:
                self._open.pop(next(iter(self._open)))
            self._open[grant_id] = grant

    def get(self, grant_id: str) -> UploadGrant | None:
        with self._lock:
            return self._open.get(grant_id)

    def pop(self, grant_id: str) -> None:
        with self._lock:
            self._open.pop(grant_id, None)


@dataclass(frozen=True)
class XetToken:
    """A CAS access token minted by a xet-read/write-token route: which repo, for whom, until when."""

    repo: RepoKey
    write: bool
    expires: int
    epoch: int
    grant: Grant | None
    """The Hub token's grant it was minted for: the CAS answers for what that token may read."""


@dataclass(frozen=True)
class Caller:
    """Who calls the CAS: the repo its token was minted for (as ``HubStore.tenant``) and the Hub grant."""

    tenant: str
    grant: Grant | None


class XetStore:
    """Xorbs, reconstructions and tokens; thread-safe."""

    def __init__(self, store: HubStore, max_file: int = 64 * 1024**3) -> None:
        self.store = store
        self.max_file = max_file
        """Largest file a shard may describe (its terms' sizes, checked before anything is decoded)."""
        store.sizes_elsewhere = self.size_of
        self.root = store.root / "xet"
        for sub in ("xorbs", "files", "sha256", "lfs", "chunks", "shards"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self._tokens: dict[str, XetToken] = {}
        self.grants = Grants()
        self._lock = threading.Lock()
        self._indexes: OrderedDict[str, list[XorbChunk]] = OrderedDict()

    @functools.cached_property
    def store_id(self) -> str:
        """This root's id, made when the CAS is first named (a root never asked for Xet gets no file):
        linked into place, so threads and processes sharing the root agree on it."""
        path = self.store.inside(self.root / "store-id")
        if not path.is_file():
            fd, tmp = tempfile.mkstemp(dir=self.store.tmp_dir(), prefix="store-id.")
            try:
                os.write(fd, secrets.token_hex(8).encode())
                os.close(fd)
                with contextlib.suppress(FileExistsError):
                    os.link(tmp, path)
            finally:
                os.unlink(tmp)
        return path.read_text().strip()

    # -- tokens ------------------------------------------------------------------------------

    def mint(self, repo: RepoKey, write: bool, epoch: int, grant: Grant | None) -> tuple[str, int]:
        token = f"xet_{secrets.token_hex(20)}"
        expires = int(time.time()) + TOKEN_TTL
        with self._lock:
            self._tokens[token] = XetToken(repo, write, expires, epoch, grant)
        return token, expires

    def check(self, authorization: str, write: bool, epoch: int) -> Caller:
        """The caller behind an ``Authorization: Bearer`` Xet token, or a 401 (unknown, expired, its
        repo deleted) / 403 (read-only)."""
        value = authorization.removeprefix("Bearer ").strip()
        with self._lock:
            token = self._tokens.get(value)
        if token is None or token.expires <= time.time() or token.epoch != epoch:
            raise StoreError(401, "Xet access token missing, invalid or expired")
        if write and not token.write:
            raise StoreError(403, "this Xet token is read-only")
        if not self.store.exists(token.repo):
            raise StoreError(401, "Xet access token missing, invalid or expired")
        return Caller(self.store.tenant(token.repo), token.grant)

    def share_xorbs(self, sha256: str, tenant: str) -> None:
        """Make the xorbs of the Xet file ``sha256`` (if it is one) reachable through ``tenant``."""
        file_hash = self.xet_hash_for(sha256)
        record = None if file_hash is None else self.file_record(file_hash)
        for xorb, *_ in record["segments"] if record else []:
            self.store.tenancy.add("xorb", xorb, tenant)

    def reaches(self, kind: Kind, digest: str, caller: Caller) -> bool:
        """Whether ``caller`` may see ``digest``: held by its token's repo or one its grant covers."""
        return self.store.reachable(kind, digest, caller.tenant, lambda key: covers(caller.grant, key))

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
        """A stored xorb's chunks; the last ``INDEX_CACHE`` read are kept (a xorb never changes), so a
        shard naming one xorb in many terms reads its index once."""
        with self._lock:
            if xorb in self._indexes:
                self._indexes.move_to_end(xorb)
                return self._indexes[xorb]
        path = self._path("xorbs", xorb, ".json")
        if not path.is_file():
            raise StoreError(400, f"xorb {xorb} was not uploaded")
        index = [XorbChunk(o, s, n, bytes.fromhex(h)) for o, s, n, h in json.loads(path.read_text())]
        with self._lock:
            self._indexes[xorb] = index
            while len(self._indexes) > xetformat.INDEX_CACHE:
                self._indexes.popitem(last=False)
        return index

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

    def object_xet_hash(self, sha256: str, compute: bool) -> str | None:
        """The Xet hash of the LFS object ``sha256`` however it arrived, None if the Hub holds no such
        object (or, without ``compute``, if it is not known yet): the Hub converts LFS uploads to Xet, so every LFS file has one, and a cross-repo copy
        needs it (huggingface_hub ``_duplicate_lfs_files``). A plain LFS object's is computed from its
        bytes on first ask and kept, so a push never pays for it. hf_xet's ``hash_files`` computes it:
        it is xet-core's own content-defined chunker and hasher (``xetformat`` has the hashes, not the
        chunker), so the hash is the one an Xet upload of the same bytes registers."""
        known = self.xet_hash_for(sha256)
        if known is not None:
            return known
        cached = self._path("lfs", sha256)
        if cached.is_file():
            return cached.read_text().strip()
        blob = self.store.lfs_path(sha256)
        if not compute or not blob.is_file():
            return None
        file_hash = str(hf_xet.hash_files([str(blob)])[0].hash)
        atomic_write_text(cached, file_hash)
        return file_hash

    def size_of(self, sha256: str) -> int | None:
        """Size of the file ``sha256`` registered by a shard, None if none was."""
        file_hash = self.xet_hash_for(sha256)
        record = None if file_hash is None else self.file_record(file_hash)
        return None if record is None else int(record["size"])

    def read(self, sha256: str, start: int, length: int) -> Iterator[bytes]:
        """Bytes ``start`` to ``start + length`` of the file ``sha256``, decoded from its xorbs."""
        file_hash = self.xet_hash_for(sha256)
        record = None if file_hash is None else self.file_record(file_hash)
        if record is None:
            raise StoreError(404, f"object {sha256} not found")
        position = 0
        for xorb, first, end, size in record["segments"]:
            if position + size > start and length > 0:
                for chunk in self.rebuild([Segment(xorb, first, end, size)]):
                    skip = max(start - position, 0)
                    position += len(chunk)
                    if position > start and length > 0:
                        piece = chunk[skip : skip + length]
                        length -= len(piece)
                        yield piece
            else:
                position += size

    # -- uploads -----------------------------------------------------------------------------

    def put_xorb(self, xorb: str, source: Readable, tenant: str) -> bool:
        """Stream a xorb to disk (written off the request thread, ``upload_sink``), then decode and
        hash every chunk from the page cache; keep it only if it hashes to ``xorb``."""
        target = self.xorb_path(xorb)
        fd, tmp = tempfile.mkstemp(dir=self.store.tmp_dir(), prefix="xorb.")
        try:
            try:
                received = sink(source, [FileWriter(fd)], MAX_XORB_BYTES)
            finally:
                os.close(fd)
            if received > MAX_XORB_BYTES:
                raise StoreError(413, f"xorb larger than {MAX_XORB_BYTES} bytes")
            with open(tmp, "rb", buffering=BUFFER) as handle:
                try:
                    index = xetformat.scan_xorb(handle)
                except XetFormatError as exc:
                    raise StoreError(400, f"invalid xorb {xorb}: {exc}") from None
            actual = xetformat.hash_hex(xetformat.aggregated_hash([(c.hash, c.size) for c in index]))
            if actual != xorb:
                raise StoreError(400, f"xorb body hashes to {actual}, not {xorb}")
            self.store.tenancy.add("xorb", xorb, tenant)  # the upload proved the bytes are the uploader's
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

    def put_shard(self, data: bytes, caller: Caller) -> int:
        """Register every file of a shard after checking it; returns how many were new.

        Every file is proved before any becomes reachable through the caller's repo with its xorbs:
        its terms name xorbs the caller reaches and give its Xet hash, and its sha256 and size are
        the ones the bytes gave (new file) or that the hash is bound to (known file).
        """
        try:
            files, xorbs = xetformat.parse_shard(data)
        except XetFormatError as exc:
            raise StoreError(400, f"invalid shard: {exc}") from None
        if sum(item.size for item in files) > self.max_file:  # checked before anything is decoded
            raise StoreError(413, f"the shard's files hold more than {self.max_file} bytes")
        self._check_work(files, caller)
        new = sum(self._prove(item, caller) for item in files)
        for item in files:
            self.store.tenancy.add("lfs", str(item.sha256), caller.tenant)
            for segment in item.segments:
                self.store.tenancy.add("xorb", segment.xorb, caller.tenant)
        firsts: dict[str, set[int]] = {}
        for item in files:
            if item.segments:
                firsts.setdefault(item.segments[0].xorb, set()).add(item.segments[0].start)
        indexed = [x for x in xorbs if self._keep_record(x, caller)]
        if indexed:
            shard = hashlib.sha256(data).hexdigest()
            atomic_write_text(self._path("shards", shard), "".join(f"{x.xorb}\n" for x in indexed))
            for xorb in indexed:
                for n, chunk in enumerate(xorb.chunk_hashes):
                    if n in firsts.get(xorb.xorb, ()) or xetformat.is_dedup_eligible(chunk):
                        atomic_write_text(self._path("chunks", xetformat.hash_hex(chunk)), shard)
                        self.store.tenancy.add("chunk", xetformat.hash_hex(chunk), caller.tenant)
        return new

    def _check_work(self, files: list[xetformat.ShardFile], caller: Caller) -> None:
        """Refuse, before any chunk is hashed or decoded, a shard whose check would cost more than a
        bound linear in its size and the distinct chunks it names (``xetformat.shard_work_problem``),
        counting the xorbs ``caller`` reaches only (reach asked first, as ``_check_terms`` does)."""
        named = {term.xorb for item in files for term in item.segments}
        sizes = {
            x: [c.size for c in self.xorb_index(x)]
            for x in named
            if self.reaches("xorb", x, caller) and self.has_xorb(x)
        }
        problem = xetformat.shard_work_problem(files, sizes)
        if problem is not None:
            raise StoreError(400, f"invalid shard: {problem}")

    def _keep_record(self, xorb: xetformat.ShardXorb, caller: Caller) -> bool:
        """Keep a xorb's shard record for dedup answers, if it describes a xorb the CAS holds and
        ``caller`` reaches (another tenant's xorb is not re-indexed under a stranger's shard)."""
        if (
            not self.reaches("xorb", xorb.xorb, caller)
            or not self.has_xorb(xorb.xorb)
            or [c.hash for c in self.xorb_index(xorb.xorb)] != xorb.chunk_hashes
        ):
            return False
        atomic_write_bytes(self._path("xorbs", xorb.xorb, ".shard"), xorb.raw)
        return True

    def dedup_shard(self, chunk: str, caller: Caller) -> bytes | None:
        """The answer to a dedup probe for ``chunk``: the records of every xorb of the shard that
        registered it which ``caller`` reaches, or None if there are none. The chunk's reach is asked
        first: another tenant's chunk is refused after the same one lookup as an unknown one."""
        path = self._path("chunks", chunk)
        if not self.reaches("chunk", chunk, caller) or not path.is_file():
            return None
        shard = self._path("shards", path.read_text().strip())
        records = []
        for xorb in shard.read_text().split() if shard.is_file() else []:
            record = self._path("xorbs", xorb, ".shard")
            if record.is_file() and self.reaches("xorb", xorb, caller):
                records.append(record.read_bytes())
        return xetformat.dedup_shard(records, int(time.time())) if records else None

    def _prove(self, item: xetformat.ShardFile, caller: Caller) -> bool:
        """Check one shard file against the xorbs and the binding; True if it was new (registered)."""
        if item.sha256 is None:
            raise StoreError(400, f"shard file {item.file_hash} carries no sha256 metadata")
        self._check_terms(item, caller)
        record = self.file_record(item.file_hash)
        if record is None:
            self._register(item)
            return True
        if (record["sha256"], int(record["size"])) != (item.sha256, item.size):
            raise StoreError(
                400, f"shard file {item.file_hash} claims another sha256 or size than it was registered with"
            )
        return False

    def _check_terms(self, item: xetformat.ShardFile, caller: Caller) -> None:
        """Refuse a file whose terms do not give its Xet hash from xorbs ``caller`` reaches, with one
        message whatever the cause (another tenant's or a missing xorb, a bad range, other chunks):
        the answer must not tell what the CAS holds. The tenancy index is asked first, so another tenant's xorb
        is refused after the same lookup as a missing one."""
        refused = StoreError(400, f"shard file {item.file_hash} does not match the xorbs it names")
        if item.size > self.max_file:
            raise StoreError(413, f"shard file {item.file_hash} is larger than {self.max_file} bytes")
        pairs: list[tuple[bytes, int]] = []
        for segment in item.segments:
            if not self.reaches("xorb", segment.xorb, caller) or not self.has_xorb(segment.xorb):
                raise refused
            index = self.xorb_index(segment.xorb)
            chosen = index[segment.start : segment.end]
            if segment.end > len(index) or sum(c.size for c in chosen) != segment.size:
                raise refused
            pairs.extend((c.hash, c.size) for c in chosen)
        if xetformat.hash_hex(xetformat.file_hash(pairs)) != item.file_hash:
            raise refused

    def _register(self, item: xetformat.ShardFile) -> None:
        # Hashed as decoded, never written: the xorbs stay the file's only copy. Decoding on this
        # thread, sha256 on another (``upload_sink``): the check costs about the slower of the two.
        digest = hashlib.sha256()
        sink(Chunks(self.rebuild(item.segments)), [digest.update], item.size)
        if digest.hexdigest() != item.sha256:
            raise StoreError(
                400, f"shard file {item.file_hash}: its bytes do not hash to sha256 {item.sha256}"
            )
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

    def _reachable_record(self, file_hash: str, caller: Caller) -> dict[str, Any]:
        record = self.file_record(file_hash)
        if record is None or not self.reaches("lfs", record["sha256"], caller):
            raise StoreError(404, f"file {file_hash} not found")
        return record

    def reconstructed_size(self, file_hash: str, caller: Caller) -> int:
        return int(self._reachable_record(file_hash, caller)["size"])

    def reconstruction(
        self, file_hash: str, first: int, last: int | None, fetch_url: str, caller: Caller
    ) -> dict[str, Any]:
        """The V1 reconstruction of bytes ``first..last`` (inclusive) of a file ``caller`` reaches:
        terms plus fetch ranges."""
        record = self._reachable_record(file_hash, caller)
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
