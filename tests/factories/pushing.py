"""A release pushed in-process (``push_release``) to a new repo on the loopback Hub."""

from __future__ import annotations

from pathlib import Path

from hubrelease.hub.plan import build_plan, read_remote
from hubrelease.hub.push import push_release
from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub
from tests.factories.hub import api_for, unique_repo
from tests.factories.releases import write_release


def push_to_new_repo(
    hub: LoopbackHub, tmp_path: Path, files: dict[str, bytes], batch_bytes: int
) -> tuple[str, int]:
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
