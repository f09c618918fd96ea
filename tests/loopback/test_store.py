"""The store's LFS ingest: objects kept only whole and checked, written off the receiving thread,
multipart parts written in place and checked once, and nothing left behind by a broken upload."""

from __future__ import annotations

import hashlib
import io
import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from hubrelease_loopback import LoopbackHub, RepoKey, store, upload_sink
from hubrelease_loopback.lfs import upload_href
from hubrelease_loopback.store import HubStore, MultipartUpload, StoreError
from tests.factories.waiting import CEILING_S, wait_until


class Cut:
    """A body that stops after ``after`` bytes with the connection reset (a client killed mid-upload)."""

    def __init__(self, data: bytes, after: int) -> None:
        self.data, self.after, self.read = data, after, 0

    def readinto(self, view: memoryview, /) -> int:
        piece = self.data[self.read : min(self.after, self.read + len(view))]
        if not piece:
            raise ConnectionResetError("client went away")
        view[: len(piece)] = piece
        self.read += len(piece)
        return len(piece)


def _leftovers(hub_store: HubStore) -> list[str]:
    return sorted(p.name for p in (hub_store.root / "tmp").iterdir()) + sorted(
        p.name for p in (hub_store.root / "lfs").rglob("*") if p.is_file()
    )


def test_an_object_is_written_and_hashed_off_the_receiving_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = os.urandom(3 * upload_sink.BUFFER + 1)
    sha = hashlib.sha256(data).hexdigest()
    writers: set[threading.Thread] = set()
    pwrite, write = os.pwrite, os.write

    def recording_pwrite(fd: int, view: Any, offset: int) -> int:
        writers.add(threading.current_thread())
        return pwrite(fd, view, offset)

    def recording_write(fd: int, view: Any) -> int:
        writers.add(threading.current_thread())
        return write(fd, view)

    monkeypatch.setattr(os, "pwrite", recording_pwrite)
    monkeypatch.setattr(os, "write", recording_write)
    hub_store = HubStore(tmp_path)
    assert hub_store.put_lfs(sha, len(data), io.BytesIO(data)) == len(data)
    assert hub_store.lfs_path(sha).read_bytes() == data
    assert writers and threading.current_thread() not in writers


@pytest.mark.parametrize("body", [b"short", b"a longer body than claimed"])
def test_an_upload_of_other_bytes_leaves_nothing(tmp_path: Path, body: bytes) -> None:
    claimed = os.urandom(12)
    hub_store = HubStore(tmp_path)
    with pytest.raises(StoreError) as caught:
        hub_store.put_lfs(hashlib.sha256(claimed).hexdigest(), len(claimed), io.BytesIO(body))
    assert caught.value.status == 400
    assert _leftovers(hub_store) == []


def test_an_upload_cut_short_leaves_nothing(tmp_path: Path) -> None:
    data = os.urandom(2 * upload_sink.BUFFER)
    hub_store = HubStore(tmp_path)
    with pytest.raises(ConnectionResetError):
        hub_store.put_lfs(hashlib.sha256(data).hexdigest(), len(data), Cut(data, upload_sink.BUFFER + 3))
    assert _leftovers(hub_store) == []


def _multipart(data: bytes, part_size: int) -> MultipartUpload:
    return MultipartUpload(hashlib.sha256(data).hexdigest(), len(data), "b" * 32, part_size)


def _put(hub_store: HubStore, upload: MultipartUpload, data: bytes, number: int) -> dict[str, Any]:
    offset, length = upload.span(number)
    piece = data[offset : offset + length]
    return {"partNumber": number, "etag": hub_store.put_part(upload, number, io.BytesIO(piece))}


def _no_reread(path: Path) -> tuple[int, str]:
    raise AssertionError("the object was read again")


@pytest.mark.parametrize("order", [(1, 2, 3, 4), (4, 2, 1, 3), (2, 1, 4, 3)])
def test_parts_in_any_order_are_assembled_in_place_and_not_read_again_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: tuple[int, ...]
) -> None:
    """Parts sent several at once (hubrelease) or one after another (huggingface_hub): the
    completion takes the sha256 the parts gave as they came, without a second read of the object."""
    monkeypatch.setattr(store, "sha256_file", _no_reread)
    data = os.urandom(250_000)
    hub_store, upload = HubStore(tmp_path), _multipart(data, 64_000)
    parts = [_put(hub_store, upload, data, n) for n in order]
    hub_store.complete_multipart(upload, parts)
    assert hub_store.lfs_path(upload.sha256).read_bytes() == data
    assert _leftovers(hub_store) == [upload.sha256]


def test_parts_out_of_order_with_other_bytes_are_refused(tmp_path: Path) -> None:
    """A part that came ahead of the digest is read back as written: its bytes are what is checked."""
    data = os.urandom(250_000)
    hub_store, upload = HubStore(tmp_path), _multipart(data, 64_000)
    tampered = data[:128_000] + os.urandom(64_000) + data[192_000:]
    parts = [_put(hub_store, upload, tampered, n) for n in (3, 4, 2, 1)]
    with pytest.raises(StoreError, match="do not match the LFS object"):
        hub_store.complete_multipart(upload, parts)
    assert _leftovers(hub_store) == []


def test_a_part_sent_again_with_other_bytes_is_caught_at_completion(tmp_path: Path) -> None:
    """The running sha256 covered the first bytes of part 2; the object now holds others."""
    data = os.urandom(250_000)
    hub_store, upload = HubStore(tmp_path), _multipart(data, 64_000)
    parts = [_put(hub_store, upload, data, n) for n in range(1, upload.parts + 1)]
    tampered = data[:64_000] + os.urandom(64_000) + data[128_000:]
    parts[1] = _put(hub_store, upload, tampered, 2)
    with pytest.raises(StoreError, match="do not match the LFS object"):
        hub_store.complete_multipart(upload, parts)
    assert _leftovers(hub_store) == []


@pytest.mark.parametrize("length", [63_999, 64_001, 200_000])
def test_a_part_of_another_length_than_its_share_is_refused(tmp_path: Path, length: int) -> None:
    data = os.urandom(250_000)
    hub_store, upload = HubStore(tmp_path), _multipart(data, 64_000)
    source = io.BytesIO(os.urandom(length))
    with pytest.raises(StoreError, match="part 2 must be 64000 bytes") as caught:
        hub_store.put_part(upload, 2, source)
    assert caught.value.status == 400
    assert source.tell() <= 64_001  # a longer part is not read to its end
    with pytest.raises(StoreError, match="part 5 is not one of the 4 parts"):
        hub_store.put_part(upload, 5, io.BytesIO(b""))


def test_a_part_cut_short_leaves_no_etag(tmp_path: Path) -> None:
    data = os.urandom(250_000)
    hub_store, upload = HubStore(tmp_path), _multipart(data, 64_000)
    parts = [_put(hub_store, upload, data, n) for n in (1, 3, 4)]
    with pytest.raises(ConnectionResetError):
        hub_store.put_part(upload, 2, Cut(data[64_000:128_000], 10_000))
    parts.append({"partNumber": 2, "etag": "0" * 32})
    with pytest.raises(StoreError, match="missing part 2"):
        hub_store.complete_multipart(upload, parts)
    assert not hub_store.has_lfs(upload.sha256, upload.size)


def test_a_put_the_client_abandons_leaves_nothing_on_the_hub(tmp_path: Path) -> None:
    data = os.urandom(3 * upload_sink.BUFFER)
    sha = hashlib.sha256(data).hexdigest()
    with LoopbackHub(tmp_path / "root") as hub:
        key = RepoKey("model", "acme/cut")
        hub.store.create_repo(key, private=False)
        target = upload_href(hub, key, sha, len(data)).removeprefix(hub.url)
        with socket.create_connection(("127.0.0.1", hub.port), timeout=CEILING_S) as conn:
            conn.sendall(f"PUT {target} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n".encode())
            conn.sendall(data[: upload_sink.BUFFER + 7])
        wait_until(lambda: hub.requests.count("lfs_upload") == 1)  # answered 400 to no one
        assert _leftovers(hub.store) == []
        assert hub.server_errors == []


def test_a_completion_after_the_parts_were_cleaned_away_is_refused(tmp_path: Path) -> None:
    data = os.urandom(100_000)
    hub_store, upload = HubStore(tmp_path), _multipart(data, 64_000)
    parts = [_put(hub_store, upload, data, n) for n in (1, 2)]
    hub_store.multipart_path(upload.sha256, upload.upload_id).unlink()  # as clean_stale_tmp does
    with pytest.raises(StoreError, match="parts are gone") as caught:
        hub_store.complete_multipart(upload, parts)
    assert caught.value.status == 400
