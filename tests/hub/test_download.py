"""hub.download against the loopback Hub: one GET per file, never past the listed size, content checked."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from hubrelease.errors import HubUnavailable
from hubrelease.hub.download import download, read_checked, read_whole
from hubrelease.hub.metadata import list_files
from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.faults import FILE_ROUTES
from tests.factories.hub import api_for, logged, unique_repo, upload_files

FILES = {
    "config.json": b'{"a": 1}\n',
    "nested/notes.txt": b"regular\n",
    "README.md": b"---\nlicense: mit\n---\n\0" + b"x" * 64,  # a NUL byte sends it to LFS
}


def test_files_land_at_their_repo_paths_one_get_each(loopback_hub: LoopbackHub, tmp_path: Path) -> None:
    api, repo = api_for(loopback_hub), unique_repo("download")
    commit = upload_files(api, repo, FILES)
    listed = list_files(api, repo, commit)
    assert listed["README.md"].sha256 is not None and listed["config.json"].sha256 is None
    loopback_hub.requests.clear()
    local = download(api, repo, commit, "model", [listed[n] for n in FILES], folder=tmp_path)
    assert {name: path.read_bytes() for name, path in local.items()} == FILES
    assert local["nested/notes.txt"] == tmp_path / "nested" / "notes.txt"
    resolves = [r for r in logged(loopback_hub, "resolve", len(FILES)) if r.method == "GET"]
    assert sorted(r.path.rpartition(f"/resolve/{commit}/")[2] for r in resolves) == sorted(FILES)
    assert loopback_hub.requests.count("resolve", "HEAD") == 0


def test_a_listing_shorter_than_the_file_is_read_to_its_size_and_refused(loopback_hub: LoopbackHub) -> None:
    api, repo = api_for(loopback_hub), unique_repo("download")
    commit = upload_files(api, repo, {"big.txt": b"y" * 100_000})
    short = dataclasses.replace(list_files(api, repo, commit)["big.txt"], size=10)
    loopback_hub.requests.clear()
    assert read_whole(api, repo, commit, "model", short) == b"y" * 10
    assert loopback_hub.requests.bytes_out(FILE_ROUTES) < 1_000
    with pytest.raises(
        HubUnavailable, match=r"big\.txt: the Hub sent bytes that are not git blob [0-9a-f]{40}$"
    ):
        read_checked(api, repo, commit, "model", short)


def test_an_lfs_file_is_checked_against_its_sha256(loopback_hub: LoopbackHub) -> None:
    api, repo = api_for(loopback_hub), unique_repo("download")
    commit = upload_files(api, repo, {"README.md": FILES["README.md"]})
    listed = list_files(api, repo, commit)["README.md"]
    assert read_checked(api, repo, commit, "model", listed) == FILES["README.md"]
    forged = dataclasses.replace(listed, sha256="0" * 64)
    with pytest.raises(HubUnavailable, match=r"README\.md: the Hub sent bytes that are not sha256 0{64}$"):
        read_checked(api, repo, commit, "model", forged)
