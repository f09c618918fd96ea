"""Push never reads outside the release folder, over Xet and over plain LFS.

A release file swapped for a symlink to the token file (or its folder for a symlink to another
folder) while push runs must send no byte of the outside file: the loopback Hub's request log
counts every body byte it received, and its store is searched for the outside bytes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import HfApi

from hubrelease.errors import CheckFailed, InputError
from hubrelease.hub.plan import PushPlan, build_plan, read_remote
from hubrelease.hub.push import push_release
from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub
from tests.factories.hub import api_for, unique_repo
from tests.factories.releases import write_release

SECRET = os.urandom(1 << 20)  # random, so no compression hides it in the store
WEIGHTS = os.urandom(4096)


def _stored(hub: LoopbackHub, needle: bytes) -> list[Path]:
    """Files of the loopback Hub's store (objects, xorbs, shards, metadata) that hold ``needle``."""
    return [
        path for path in Path(hub.store.root).rglob("*") if path.is_file() and needle in path.read_bytes()
    ]


def _setup(hub: LoopbackHub, tmp_path: Path) -> tuple[HfApi, PushPlan, Path, Path]:
    """A release with one LFS-sized file, planned against a new repo; and the outside token file."""
    token_file = tmp_path / "outside" / "token"
    token_file.parent.mkdir()
    token_file.write_bytes(SECRET)
    folder = tmp_path / "rel"
    manifest = write_release(
        folder,
        {"weights/model.safetensors": WEIGHTS},
        extra_manifest={"release": {"repo_id": unique_repo(), "license": "mit"}},
    )
    api = api_for(hub)
    release = load_manifest(manifest)
    return api, build_plan(release, manifest, folder, read_remote(api, release)), folder, token_file


def _swap_file(folder: Path, token_file: Path) -> None:
    link = folder / "weights" / ".swap"
    link.symlink_to(token_file)
    os.replace(link, folder / "weights" / "model.safetensors")


def _swap_folder(folder: Path, token_file: Path) -> None:
    (token_file.parent / "model.safetensors").symlink_to(token_file)
    os.rename(folder / "weights", folder / "weights.old")
    (folder / "weights").symlink_to(token_file.parent)


class _SwapDuringUpload(HfApi):
    """Swaps the file just before huggingface_hub starts uploading (after push's own checks)."""

    swap: Callable[[], None] = staticmethod(lambda: None)

    def preupload_lfs_files(self, *args: Any, **kwargs: Any) -> None:
        self.swap()
        super().preupload_lfs_files(*args, **kwargs)


@pytest.mark.parametrize("transport", ["xet", "lfs"])
@pytest.mark.parametrize("swap", [_swap_file, _swap_folder])
def test_a_swap_during_the_upload_sends_no_byte_of_the_outside_file(
    hub: LoopbackHub, tmp_path: Path, transport: str, swap: Callable[[Path, Path], None], request: Any
) -> None:
    if transport == "lfs":
        request.getfixturevalue("lfs_only")
    api, plan, folder, token_file = _setup(hub, tmp_path)
    client = _SwapDuringUpload(endpoint=hub.url, token=api.token)
    client.swap = lambda: swap(folder, token_file)
    hub.requests.clear()
    with pytest.raises(CheckFailed, match="nothing was committed"):
        push_release(client, plan, message="m", verify=False)
    received = hub.requests.bytes_in()
    assert received < len(SECRET) // 4, f"the Hub received {received} bytes"
    assert _stored(hub, SECRET[1000:1064]) == []
    assert _stored(hub, WEIGHTS[1000:1064]) != []  # the planned file's own bytes were what went up
    assert hub.requests.count("commit") == 0


@pytest.mark.parametrize("swap", [_swap_file, _swap_folder])
def test_a_swap_after_planning_uploads_nothing(
    hub: LoopbackHub, tmp_path: Path, swap: Callable[[Path, Path], None]
) -> None:
    api, plan, folder, token_file = _setup(hub, tmp_path)
    swap(folder, token_file)
    hub.requests.clear()
    with pytest.raises(CheckFailed, match=r"weights/model\.safetensors: .* nothing was committed"):
        push_release(api, plan, message="m", verify=False)
    assert hub.requests.bytes_in() < 1000  # create_repo's JSON, no upload
    assert hub.requests.count("commit") == 0


def test_planning_never_hashes_a_symlinked_file(hub: LoopbackHub, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_bytes(SECRET)
    folder = tmp_path / "rel"
    manifest = write_release(
        folder, {"a.bin": b"a"}, extra_manifest={"release": {"repo_id": unique_repo(), "license": "mit"}}
    )
    (folder / "README.md").symlink_to(token_file)  # an unpinned card: push would hash and send it
    api = api_for(hub)
    release = load_manifest(manifest)
    with pytest.raises(InputError, match=r"README\.md: cannot be published: not a regular file"):
        build_plan(release, manifest, folder, read_remote(api, release))
