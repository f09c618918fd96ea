"""PushPlan from a hand-made remote snapshot: no network, every status and the deletion rule."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from huggingface_hub.utils.sha import git_hash

from hubrelease.errors import InputError
from hubrelease.hub.plan import RemoteSnapshot, build_plan
from hubrelease.hub.tree import RemoteFile
from hubrelease.manifest import load_manifest
from tests.factories.releases import write_release

FILES = {"model.safetensors": b"\x00" * 64, "config.json": b"{}\n", "notes.md": b"n\n"}


def _remote(path: str, data: bytes, lfs: bool) -> RemoteFile:
    sha256 = hashlib.sha256(data).hexdigest() if lfs else None
    return RemoteFile(path, len(data), git_hash(data), sha256)


def test_statuses_against_a_snapshot(tmp_path: Path) -> None:
    manifest_path = write_release(tmp_path, FILES)
    snapshot = RemoteSnapshot(
        "a" * 40,
        {
            "model.safetensors": _remote("model.safetensors", FILES["model.safetensors"], lfs=True),
            "config.json": _remote("config.json", b"{}\r", lfs=False),  # same size, other bytes
            "stale.bin": _remote("stale.bin", b"x", lfs=True),
            ".gitattributes": _remote(".gitattributes", b"*.bin lfs\n", lfs=False),
        },
    )
    plan = build_plan(load_manifest(manifest_path), manifest_path, tmp_path, snapshot)
    assert [(f.path, f.status) for f in plan.files] == [
        ("model.safetensors", "unchanged"),
        ("config.json", "changed"),
        ("notes.md", "added"),
        ("hubrelease.yaml", "added"),
    ]
    assert [f.path for f in plan.deleted] == ["stale.bin"]
    assert plan.parent_commit == "a" * 40
    assert plan.upload_bytes == 3 + 2 + manifest_path.stat().st_size
    assert plan.has_changes


def test_regular_file_with_same_blob_id_is_unchanged(tmp_path: Path) -> None:
    manifest_path = write_release(tmp_path, {"config.json": FILES["config.json"]})
    remote = {
        "config.json": _remote("config.json", FILES["config.json"], lfs=False),
        "hubrelease.yaml": _remote("hubrelease.yaml", manifest_path.read_bytes(), lfs=False),
    }
    plan = build_plan(load_manifest(manifest_path), manifest_path, tmp_path, RemoteSnapshot("b" * 40, remote))
    assert not plan.has_changes and plan.upload_bytes == 0


def test_missing_local_file_and_name_collision_are_input_errors(tmp_path: Path) -> None:
    manifest_path = write_release(tmp_path, FILES)
    (tmp_path / "notes.md").unlink()
    with pytest.raises(InputError, match=r"notes\.md: file to publish is missing"):
        build_plan(load_manifest(manifest_path), manifest_path, tmp_path, RemoteSnapshot(None, {}))
    clash = write_release(
        tmp_path / "clash", {"hubrelease.yaml.bak": b"x"}, manifest_name="hubrelease.yaml.bak"
    )
    with pytest.raises(InputError, match="collides with a published file"):
        build_plan(load_manifest(clash), clash, tmp_path / "clash", RemoteSnapshot(None, {}))
