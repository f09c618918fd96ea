"""Upload batches overlap: several are received at once, over Xet and over plain LFS, and each
still lands whole. Counted on the server (``uploads_in_flight``), bounded by uploads, not seconds."""

from __future__ import annotations

import os
from pathlib import Path

from hubrelease.hub.plan import build_plan, read_remote
from hubrelease.hub.push import push_release
from hubrelease.hub.upload import UPLOAD_WORKERS
from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub, RepoKey
from tests.factories.hub import api_for, unique_repo, uploads_in_flight
from tests.factories.releases import write_release

MIB = 1 << 20


def _push(hub: LoopbackHub, tmp_path: Path, files: dict[str, bytes], batch_bytes: int) -> tuple[str, int]:
    """``files`` pushed to a new repo in batches of ``batch_bytes``: (repo, batches uploaded)."""
    repo = unique_repo()
    api = api_for(hub)
    api.create_repo(repo)
    extra: dict[str, object] = {"release": {"repo_id": repo, "license": "mit"}}
    manifest = write_release(tmp_path / "rel", files, extra_manifest=extra)
    release = load_manifest(manifest)
    plan = build_plan(release, manifest, tmp_path / "rel", read_remote(api, release))
    result = push_release(api, plan, message="m", sleep=lambda _: None, batch_bytes=batch_bytes)
    assert result.landed and result.report is not None and not result.report.has_drift
    assert result.upload is not None
    return repo, result.upload.batches


def test_xet_batches_of_one_file_each_are_received_at_once(hub: LoopbackHub, tmp_path: Path) -> None:
    files = {f"model-{n}.safetensors": os.urandom(MIB) for n in range(3)}
    with uploads_in_flight([(hub.xet, "put_xorb")]) as gauge:
        repo, batches = _push(hub, tmp_path, files, MIB)
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
        _, batches = _push(hub, tmp_path, files, 100_000)
    assert batches >= UPLOAD_WORKERS + 1
    assert 2 <= gauge.peak <= UPLOAD_WORKERS, gauge


def test_the_parts_of_one_large_lfs_object_go_up_on_several_workers(
    hub: LoopbackHub, tmp_path: Path, lfs_only: None
) -> None:
    # Above the size a regular file may have (10 MiB), so it is LFS whatever its content: the test
    # Hub answers it in 64 kB parts, which huggingface_hub alone would send one after another.
    data = os.urandom((10 << 20) + 1)
    with uploads_in_flight([(hub.store, "put_part")]) as gauge:
        _push(hub, tmp_path, {"model.safetensors": data}, 512 * MIB)
    assert 2 <= gauge.peak <= UPLOAD_WORKERS, gauge
    assert hub.requests.count("lfs_complete") == 1 and hub.requests.count("lfs_verify") == 1
