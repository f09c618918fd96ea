"""Upload bodies into files: every byte reaches every consumer in order, off the receiving thread,
bounded, and a failure on either side stops the others and is raised."""

from __future__ import annotations

import hashlib
import os
import threading
from functools import partial
from pathlib import Path

import pytest

from hubrelease_loopback import upload_sink
from hubrelease_loopback.upload_sink import FileWriter, PartDigests, sha256_file, sink


class Pieces:
    """A body that arrives in pieces of ``step`` bytes (a socket's reads), then fails if ``fail``."""

    def __init__(self, data: bytes, step: int, fail: BaseException | None = None) -> None:
        self.data, self.step, self.fail = data, step, fail
        self.read = 0

    def readinto(self, view: memoryview, /) -> int:
        piece = self.data[self.read : self.read + min(self.step, len(view))]
        if not piece and self.fail is not None:
            raise self.fail
        view[: len(piece)] = piece
        self.read += len(piece)
        return len(piece)


@pytest.mark.parametrize("size", [0, 1, 4096, upload_sink.BUFFER - 1, upload_sink.BUFFER * 3 + 17])
def test_every_byte_reaches_the_file_and_the_digest_in_order(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    digest, path = hashlib.sha256(), tmp_path / "object"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        received = sink(Pieces(data, 100_003), [digest.update, FileWriter(fd)], size)
    finally:
        os.close(fd)
    assert received == size
    assert path.read_bytes() == data
    assert digest.hexdigest() == hashlib.sha256(data).hexdigest()
    assert sha256_file(path) == (size, hashlib.sha256(data).hexdigest())


def test_a_longer_body_is_read_one_byte_past_the_bound_and_no_further() -> None:
    source = Pieces(os.urandom(3 * upload_sink.BUFFER), 65_536)
    seen = bytearray()
    assert sink(source, [seen.extend], 1_000_000) == 1_000_001
    assert source.read == 1_000_001 and len(seen) == 1_000_001


def test_consumers_run_off_the_receiving_thread_while_it_receives() -> None:
    threads: set[threading.Thread] = set()

    def consume(view: memoryview) -> None:
        threads.add(threading.current_thread())

    sink(Pieces(os.urandom(upload_sink.BUFFER * 2), 1 << 20), [consume, consume], upload_sink.BUFFER * 2)
    assert threading.current_thread() not in threads and len(threads) == 2


def test_a_body_cut_short_raises_after_every_consumer_stopped() -> None:
    seen = bytearray()
    source = Pieces(os.urandom(upload_sink.BUFFER + 5), 1 << 20, ConnectionResetError("peer went away"))
    with pytest.raises(ConnectionResetError):
        sink(source, [seen.extend], 10 * upload_sink.BUFFER)
    # Whole buffers were consumed, the one being filled when the body broke was not handed on.
    assert len(seen) == upload_sink.BUFFER
    assert not [t for t in threading.enumerate() if t.name == "loopback-hub-upload"]


def test_a_failing_consumer_stops_the_receiver_and_is_raised() -> None:
    source = Pieces(os.urandom(20 * upload_sink.BUFFER), 1 << 20)

    def full(view: memoryview) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        sink(source, [full, bytearray().extend], 20 * upload_sink.BUFFER)
    # The receiver stops within the buffers already handed out, not at the end of the body.
    assert source.read <= (upload_sink.BUFFERS + 1) * upload_sink.BUFFER


def test_file_writer_puts_parts_side_by_side(tmp_path: Path) -> None:
    path = tmp_path / "object"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for offset, piece in ((5, b"world"), (0, b"hello")):
            sink(Pieces(piece, 2), [FileWriter(fd, offset)], len(piece))
    finally:
        os.close(fd)
    assert path.read_bytes() == b"helloworld"


class Parts:
    """An object's parts as the Hub holds them: what was written, and which parts were read back."""

    def __init__(self, *parts: bytes) -> None:
        self.parts = dict(enumerate(parts, 1))
        self.read_back: list[int] = []

    def hash_part(self, number: int, digest: hashlib._Hash) -> None:
        self.read_back.append(number)
        digest.update(self.parts[number])

    def send(self, digests: PartDigests, number: int, whole: bool = True) -> None:
        running = digests.begin("u", number, self.hash_part)
        data = self.parts[number] if whole else self.parts[number][:1]
        if running is not None:
            running.update(data)
        digests.end("u", number, running, whole)


def test_parts_in_order_give_the_objects_sha256_without_reading_any_back() -> None:
    digests, parts = PartDigests(), Parts(b"one", b"two", b"three")
    for number in (1, 2, 3):
        parts.send(digests, number)
    assert digests.final("u", 3) == hashlib.sha256(b"onetwothree").hexdigest()
    assert parts.read_back == []
    assert digests.final("u", 3) is None  # forgotten once asked


def test_a_part_cut_short_and_sent_again_keeps_the_running_sha256() -> None:
    digests, parts = PartDigests(), Parts(b"one", b"two")
    parts.send(digests, 1)
    parts.send(digests, 2, whole=False)
    parts.send(digests, 2)
    assert digests.final("u", 2) == hashlib.sha256(b"onetwo").hexdigest()


@pytest.mark.parametrize(("order", "read_back"), [([1, 3, 2], [3]), ([2, 1], [2]), ([3, 2, 1], [2, 3])])
def test_parts_out_of_order_are_read_back_once_the_parts_before_them_are_in(
    order: list[int], read_back: list[int]
) -> None:
    """Several parts of one object sent at once: each part that came ahead of the digest is read
    back once, the others are hashed as they stream in; no second read of the whole object."""
    digests, parts = PartDigests(), Parts(b"one", b"two", b"three")
    for number in order:
        parts.send(digests, number)
    assert (
        digests.final("u", len(order))
        == hashlib.sha256(b"".join(parts.parts[n] for n in sorted(order))).hexdigest()
    )
    assert parts.read_back == read_back


@pytest.mark.parametrize("order", [[1, 2, 1], [2, 2, 1], [1, 3, 3, 2]])
def test_a_part_sent_again_after_it_arrived_whole_drops_the_running_sha256(order: list[int]) -> None:
    """The bytes under the digest may have changed: the completion must read the object."""
    digests, parts = PartDigests(), Parts(b"one", b"two", b"three")
    for number in order:
        parts.send(digests, number)
    assert digests.final("u", max(order)) is None


def test_two_uploads_of_one_part_at_once_leave_no_running_sha256() -> None:
    digests, parts = PartDigests(), Parts(b"one")
    first = digests.begin("u", 1, parts.hash_part)
    assert first is not None and digests.begin("u", 1, parts.hash_part) is None
    first.update(b"one")
    digests.end("u", 1, first, True)
    assert digests.final("u", 1) is None


def test_a_part_that_cannot_be_read_back_leaves_no_running_sha256() -> None:
    def gone(number: int, digest: hashlib._Hash) -> None:
        raise FileNotFoundError("the object was cleaned up")

    digests = PartDigests()
    for number in (2, 1):
        running = digests.begin("u", number, gone)
        if running is not None:
            running.update(b"x")
        digests.end("u", number, running, True)
    assert digests.final("u", 2) is None


def test_full_size_buffers_are_kept_for_the_next_upload() -> None:
    """A part of huggingface_hub's multipart upload fills each buffer once: fresh ones would cost
    a page fault per 4 KiB of every part."""
    size = upload_sink.BUFFERS * upload_sink.BUFFER  # every buffer filled once
    buffers: list[set[int]] = []
    for _ in range(2):
        seen: set[int] = set()
        buffers.append(seen)
        sink(Pieces(os.urandom(size), 1 << 20), [partial(_note_buffer, seen)], size)
    assert len(buffers[0]) == upload_sink.BUFFERS and buffers[1] == buffers[0]


def _note_buffer(seen: set[int], view: memoryview) -> None:
    seen.add(id(view.obj))
