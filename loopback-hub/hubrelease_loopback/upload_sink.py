"""Upload bodies into files at hashing speed: the request thread only receives, each digest and the
file write run on threads of their own over a few large reused buffers.

The Hub checks an upload by its digests (LFS: the sha256 of every byte), so single-stream sha256
is the ceiling of what it can ingest. hashlib releases the GIL while it hashes a buffer larger than
2 KiB, and ``os.pwrite`` while it writes: with the request thread filling buffers by ``recv_into``
(no copy in Python) and every consumer taking each filled buffer in turn on its own thread, an
upload costs about the slowest of receive, sha256 and write, not their sum. Measured against
single-stream ``openssl dgst -sha256`` and a raw socket by ``bench/hub_ingest_bench.py``
(``bench/RESULTS.md``).
"""

from __future__ import annotations

import hashlib
import os
import queue
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

BUFFER = 4 << 20
"""Bytes per buffer: large enough that a hash update or a write costs one GIL hand-off per 4 MiB."""
BUFFERS = 4
"""Buffers per upload: the receiver fills one while the consumers still work on the others."""
KEPT = 16
"""Full-size buffers kept between uploads: a fresh 4 MiB buffer costs its page faults on first
fill, which for huggingface_hub's multipart upload (a request per 16 MiB part, every buffer filled
once) is a zeroing pass over every byte received."""
_kept: list[memoryview] = []
_kept_lock = threading.Lock()


def _buffer(size: int) -> memoryview:
    if size == BUFFER:
        with _kept_lock:
            if _kept:
                return _kept.pop()
    return memoryview(bytearray(size))


def _give_back(view: memoryview) -> None:
    if len(view) == BUFFER:
        with _kept_lock:
            if len(_kept) < KEPT:
                _kept.append(view)


Consumer = Callable[[memoryview], object]
"""Takes every received byte, in order, one buffer at a time (a digest's ``update``, a ``FileWriter``);
it must not keep the view past the call: the buffer is filled again."""


class Readable(Protocol):
    """A body to take in: ``readinto`` fills (part of) a buffer and says how much, 0 at the end."""

    def readinto(self, view: memoryview, /) -> int: ...


class Chunks:
    """``Readable`` over pieces of bytes (a Xet file decoded chunk by chunk from its xorbs): the
    pieces are produced on the calling thread while a consumer still hashes the last buffer."""

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


class FileWriter:
    """Writes consecutive buffers into ``fd`` from ``offset`` on (``os.pwrite``: the descriptor's
    position is not shared, so the parts of one multipart object land side by side)."""

    def __init__(self, fd: int, offset: int = 0) -> None:
        self.fd = fd
        self.position = offset

    def __call__(self, view: memoryview) -> None:
        done = 0
        while done < len(view):
            done += os.pwrite(self.fd, view[done:], self.position + done)
        self.position += len(view)


@dataclass(eq=False)
class _Slot:
    """One reusable buffer and how many consumers still hold it."""

    view: memoryview
    holders: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def release(self, free: queue.Queue[_Slot]) -> None:
        with self.lock:
            self.holders -= 1
            last = self.holders == 0
        if last:
            free.put(self)


class _Lane:
    """One consumer on its own thread; after a failure it only hands buffers back (the receiver
    stops at its next buffer, ``sink`` raises the failure)."""

    def __init__(self, consume: Consumer, free: queue.Queue[_Slot]) -> None:
        self.consume = consume
        self.free = free
        self.filled: queue.Queue[tuple[_Slot, int] | None] = queue.Queue()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="loopback-hub-upload", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (item := self.filled.get()) is not None:
            slot, count = item
            if self.error is None:
                try:
                    self.consume(slot.view[:count])
                except BaseException as exc:  # handed to the request thread, which raises it
                    self.error = exc
            slot.release(self.free)


def _fill(source: Readable, view: memoryview) -> int:
    count = 0
    while count < len(view) and (got := source.readinto(view[count:])):
        count += got
    return count


def sink(source: Readable, consumers: Sequence[Consumer], most: int) -> int:
    """Read ``source`` to its end and give every byte to each consumer, in order; returns how many
    bytes were read. At most ``most + 1`` are read: a longer body is seen without reading it all.
    A consumer's exception is raised here once every consumer has stopped; the source's (a
    dropped connection, a body over its cap) likewise, so nothing writes after ``sink`` returns."""
    free: queue.Queue[_Slot] = queue.Queue()
    slots = [_Slot(_buffer(max(1, min(BUFFER, most + 1)))) for _ in range(BUFFERS)]
    for slot in slots:
        free.put(slot)
    lanes = [_Lane(consume, free) for consume in consumers]
    received = 0
    try:
        while received <= most and not any(lane.error for lane in lanes):
            slot = free.get()
            count = _fill(source, slot.view[: most + 1 - received])
            if not count:
                break
            slot.holders = len(lanes)
            for lane in lanes:
                lane.filled.put((slot, count))
            if not lanes:
                free.put(slot)
            received += count
    finally:
        for lane in lanes:
            lane.filled.put(None)
        for lane in lanes:
            lane.thread.join()
        for slot in slots:
            _give_back(slot.view)
    for lane in lanes:
        if lane.error is not None:
            raise lane.error
    return received


def sha256_file(path: Path) -> tuple[int, str]:
    """(size, sha256 hex) of the file at ``path``, read into the same large buffers as an upload."""
    digest = hashlib.sha256()
    with path.open("rb", buffering=0) as handle:
        size = sink(handle, [digest.update], os.fstat(handle.fileno()).st_size)
    return size, digest.hexdigest()


PartHasher = Callable[[int, "hashlib._Hash"], None]
"""Adds part N's bytes, read back from where the part was written, to a digest (catching up)."""


@dataclass(eq=False)
class _Running:
    digest: hashlib._Hash
    hash_part: PartHasher
    next: int = 1
    """The first part not yet in ``digest``."""
    busy: bool = False
    """A thread is adding a part to ``digest`` (the request thread inline, or the catch-up)."""
    arrived: set[int] = field(default_factory=set)
    """Parts after ``next`` that arrived whole and wait for the digest to reach them."""
    sending: set[int] = field(default_factory=set)
    """Parts whose upload is under way."""


class PartDigests:
    """The sha256 of objects that arrive in numbered parts, taken while the parts arrive.

    huggingface_hub sends a multipart upload's parts one after another (``lfs.py``
    ``_upload_parts_iteratively``): each is hashed as it streams in. hubrelease sends several parts
    of one object at once, as S3-style stores accept: a part that arrives ahead of the digest is
    read back (from the page cache, off the request thread) once every part before it is in, so the
    digest follows the contiguous prefix and the completion waits for at most the last few parts,
    not a second read of the whole object. A part sent again after it arrived whole, or two uploads
    of one part at once, drop the running digest for good (the bytes under it may have changed):
    the completion then reads the object, as it does for a server that forgot it (a restart,
    ``MAX_OPEN`` newer uploads) or a catch-up read that failed.
    """

    MAX_OPEN = 1024

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._running: dict[str, _Running | None] = {}

    def begin(self, upload: str, number: int, hash_part: PartHasher) -> hashlib._Hash | None:
        """A copy of the running digest to hash part ``number`` into as it streams (it is the next
        one and no other thread adds to the digest), else None. The copy is kept only if ``end``
        says the part arrived whole."""
        with self._lock:
            if upload not in self._running:
                if len(self._running) >= self.MAX_OPEN:
                    self._running.pop(next(iter(self._running)))
                self._running[upload] = _Running(hashlib.sha256(), hash_part)
            running = self._running[upload]
            if running is None:
                return None
            if number < running.next or number in running.arrived or number in running.sending:
                self._running[upload] = None
                return None
            running.sending.add(number)
            if running.busy or running.next != number:
                return None
            running.busy = True
            return running.digest.copy()

    def end(self, upload: str, number: int, digest: hashlib._Hash | None, whole: bool) -> None:
        """Part ``number`` is over; ``whole``: every byte of it arrived and was written."""
        with self._lock:
            running = self._running.get(upload)
            if running is None:
                return
            running.sending.discard(number)
            if digest is not None:
                running.busy = False
                if whole:
                    running.digest, running.next = digest, number + 1
            elif whole:
                running.arrived.add(number)
            if not running.busy and running.next in running.arrived:
                running.busy = True
                threading.Thread(
                    target=self._catch_up, args=(upload, running), name="loopback-hub-parts", daemon=True
                ).start()
            self._idle.notify_all()

    def _catch_up(self, upload: str, running: _Running) -> None:
        """Add the parts that arrived ahead of the digest, in order, while the next one is there."""
        while True:
            with self._lock:
                current = self._running.get(upload) is running
                if not current or running.next not in running.arrived:
                    running.busy = False
                    self._idle.notify_all()
                    return
                number = running.next
            try:
                running.hash_part(number, running.digest)
            except OSError:  # the object is gone (completed, cleaned as stale): nothing to follow
                with self._lock:
                    if self._running.get(upload) is running:
                        self._running[upload] = None
                    running.busy = False
                    self._idle.notify_all()
                return
            with self._lock:
                running.arrived.discard(number)
                running.next = number + 1

    def final(self, upload: str, parts: int) -> str | None:
        """The object's sha256 hex if all ``parts`` parts are in the digest, else None; forgets it.
        Waits for a catch-up under way (it reads at most the parts still behind)."""
        with self._lock:
            running = self._running.get(upload)
            while running is not None and running.busy and not running.sending:
                self._idle.wait()
            running = self._running.pop(upload, None)
        if running is None or running.busy or running.sending or running.next != parts + 1:
            return None
        return running.digest.hexdigest()


def hash_span(path: Path, start: int, length: int, digest: hashlib._Hash) -> None:
    """Add bytes ``[start, start + length)`` of the file at ``path`` to ``digest``."""
    buffer = _buffer(BUFFER)
    try:
        with path.open("rb", buffering=0) as handle:
            done = 0
            while done < length:
                got = os.preadv(handle.fileno(), [buffer[: min(BUFFER, length - done)]], start + done)
                if not got:
                    raise OSError(f"{path} ends before byte {start + length}")
                digest.update(buffer[:got])
                done += got
    finally:
        _give_back(buffer)
