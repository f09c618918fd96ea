"""PushPlan from a hand-made remote snapshot: no network, every status and the deletion rule."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest
from huggingface_hub.utils.sha import git_hash

from hubrelease.errors import InputError
from hubrelease.hub.metadata import RemoteFile
from hubrelease.hub.plan import (
    MAX_FILE_BYTES,
    MAX_FILES_PER_COMMIT,
    MAX_FOLDER_ENTRIES,
    CommitLimits,
    PushPlan,
    RemoteSnapshot,
    build_plan,
    check_limits,
)
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


def _sized(plan: PushPlan, sizes: dict[str, int]) -> PushPlan:
    """``plan`` with its files replaced by ``sizes`` (path -> bytes), all to be added."""
    template = plan.files[0]
    files = tuple(dataclasses.replace(template, path=p, size=n, status="added") for p, n in sizes.items())
    return dataclasses.replace(plan, files=files)


def test_hub_limits_refuse_a_file_over_50_gb_and_warn_of_wide_folders_and_staging(tmp_path: Path) -> None:
    manifest_path = write_release(tmp_path, FILES)
    plan = build_plan(load_manifest(manifest_path), manifest_path, tmp_path, RemoteSnapshot(None, {}))
    assert check_limits(plan) == []
    too_many = _sized(plan, {f"shards/{i % 5}/{i}.bin": 1 for i in range(MAX_FILES_PER_COMMIT + 1)})
    (staged,) = check_limits(too_many)
    assert staged.startswith(
        "25,001 file(s) to change, 25,001 bytes: more than one commit carries (25,000 files"
    )
    assert staged.endswith("staged on a pull request, then merged into main as one commit")
    assert check_limits(too_many, merge=False)[0].endswith("staged on a pull request, left open for review")
    with pytest.raises(InputError, match=r"big\.gguf: 50,000,000,001 bytes, over the Hub's 50 GB per file"):
        check_limits(_sized(plan, {"big.gguf": MAX_FILE_BYTES + 1}))
    wide = _sized(plan, {f"data/{i}.json": 100 for i in range(MAX_FOLDER_ENTRIES + 1)})
    assert check_limits(wide) == [
        "data: 10,001 files in one folder, over the Hub's recommended 10,000; listing and browsing it will be slow"
    ]
    regular = _sized(plan, {f"r{i}.txt": 10 << 20 for i in range(100)})
    (warning,) = check_limits(regular)  # over 1 GB of files that may be regular: staged too
    assert warning.startswith("100 file(s) to change, 1,048,576,000 bytes: more than one commit carries")
    big = _sized(plan, {f"model-{i}.safetensors": 5 * 10**9 for i in range(5)})
    assert check_limits(big, CommitLimits(bytes=25 * 10**9)) == []
    assert len(check_limits(big)) == 1  # 25 GB: over the 20 GB one commit's upload carries
