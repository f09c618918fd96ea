"""LFS multipart: one large object's parts go up on several workers, read with ``pread``."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hubrelease.hub.multipart import OBJECTS_IN_FLIGHT, SINGLE_IN_FLIGHT, PartQueue, PartReader
from hubrelease.hub.upload import UPLOAD_WORKERS
from hubrelease_loopback import LoopbackHub
from tests.factories.hub import uploads_in_flight
from tests.factories.pushing import push_to_new_repo

MIB = 1 << 20


def test_the_parts_of_one_large_lfs_object_go_up_on_several_workers(
    hub: LoopbackHub, tmp_path: Path, lfs_only: None
) -> None:
    # Above the size a regular file may have (10 MiB), so it is LFS whatever its content: the test
    # Hub answers it in 64 kB parts, which huggingface_hub alone would send one after another.
    data = os.urandom((10 << 20) + 1)
    with uploads_in_flight([(hub.store, "put_part")]) as gauge:
        push_to_new_repo(hub, tmp_path, {"model.safetensors": data}, 512 * MIB)
    assert 2 <= gauge.peak <= UPLOAD_WORKERS, gauge
    assert hub.requests.count("lfs_complete") == 1 and hub.requests.count("lfs_verify") == 1


def test_a_part_reader_reads_its_slice_only_and_rewinds(tmp_path: Path) -> None:
    path = tmp_path / "data"
    path.write_bytes(bytes(range(256)) * 4)
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = PartReader(fd, 100, 50)
        assert reader.seek(0, os.SEEK_END) == 50 and reader.seek(0) == 0  # its length, for the client
        assert reader.read(30) == (bytes(range(256)) * 4)[100:130]
        assert reader.read() == (bytes(range(256)) * 4)[130:150] and reader.read() == b""
        reader.seek(0)  # a retry sends the part again from its start
        assert reader.read() == (bytes(range(256)) * 4)[100:150]
        assert os.lseek(fd, 0, os.SEEK_CUR) == 0  # the shared offset never moved
    finally:
        os.close(fd)


def test_single_part_lfs_objects_go_up_on_the_shared_workers(
    hub: LoopbackHub, tmp_path: Path, lfs_only: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Objects the Hub takes in one PUT share the part workers too: with overlapping batches,
    huggingface_hub's own uploads would run one pool per batch."""
    import huggingface_hub.lfs

    def not_here(**kwargs: object) -> None:
        raise AssertionError("huggingface_hub uploaded an object itself")

    monkeypatch.setattr(huggingface_hub.lfs, "_upload_single_part", not_here)
    monkeypatch.setattr(hub, "multipart_threshold", 64 * MIB)  # the Hub's default: one PUT each
    files = {f"model-{n}.safetensors": os.urandom((10 << 20) + n + 1) for n in range(2)}
    _, batches = push_to_new_repo(hub, tmp_path, files, 11 * MIB)
    assert batches == 2
    assert hub.requests.count("lfs_upload") == 2 and hub.requests.count("lfs_verify") == 2
    assert hub.requests.count("lfs_complete") == 0


def test_the_queue_lets_in_five_single_part_objects_and_two_in_parts() -> None:
    """What a push killed midway leaves half sent: at most five whole-object PUTs (``hf upload``
    keeps as many files going) or two objects in parts."""
    with ThreadPoolExecutor(1) as pool:
        queue = PartQueue(pool)
        for _ in range(SINGLE_IN_FLIGHT):
            queue.admit(1)
        blocked = threading.Thread(target=queue.admit, args=(1,), daemon=True)
        blocked.start()
        blocked.join(0.2)
        assert blocked.is_alive()
        for _ in range(SINGLE_IN_FLIGHT - OBJECTS_IN_FLIGHT + 1):
            queue.finished()
        blocked.join()  # let in by the first finished
        parted = threading.Thread(target=queue.admit, args=(3,), daemon=True)
        parted.start()
        parted.join(0.2)
        assert parted.is_alive()  # two are still open
        queue.finished()
        parted.join()
