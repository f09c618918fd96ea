"""Upload batches overlap: several are received at once, over Xet and over plain LFS, and each
still lands whole. Counted on the server (``uploads_in_flight``), bounded by uploads, not seconds."""

from __future__ import annotations

import os
from pathlib import Path

from hubrelease.hub.upload import UPLOAD_WORKERS
from hubrelease_loopback import LoopbackHub, RepoKey
from tests.factories.hub import uploads_in_flight
from tests.factories.pushing import push_to_new_repo

MIB = 1 << 20


def test_xet_batches_of_one_file_each_are_received_at_once(hub: LoopbackHub, tmp_path: Path) -> None:
    files = {f"model-{n}.safetensors": os.urandom(MIB) for n in range(3)}
    with uploads_in_flight([(hub.xet, "put_xorb")]) as gauge:
        repo, batches = push_to_new_repo(hub, tmp_path, files, MIB)
    assert batches == 4  # one file each, then the small files together
    # One batch at a time (the old loop) would never have two xorbs arriving together.
    assert gauge.peak >= 2 and gauge.calls >= 3, gauge
    assert len(hub.store.history(RepoKey("model", repo), "main")) == 2  # one commit for the release


def test_lfs_batches_of_one_file_each_are_received_at_once(
    hub: LoopbackHub, tmp_path: Path, lfs_only: None
) -> None:
    # Below the test Hub's multipart threshold (200 kB): one basic PUT each.
    files = {f"model-{n}.safetensors": os.urandom(150_000) for n in range(UPLOAD_WORKERS + 1)}
    with uploads_in_flight([(hub.store, "put_lfs")]) as gauge:
        _, batches = push_to_new_repo(hub, tmp_path, files, 100_000)
    assert batches >= UPLOAD_WORKERS + 1
    assert 2 <= gauge.peak <= UPLOAD_WORKERS, gauge
