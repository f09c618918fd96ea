"""`against_published` on the loopback Hub: each way a published file can change outside a release."""

from __future__ import annotations

import os
from pathlib import Path

from hubrelease.hub.plan import build_plan, read_remote
from hubrelease.hub.published import Published, against_published
from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub, RepoKey
from tests.factories.cli import invoke
from tests.factories.hub import api_for, unique_repo
from tests.factories.releases import write_release

WEIGHTS = os.urandom(80_000)


def _published(hub: LoopbackHub, tmp_path: Path) -> tuple[Path, RepoKey]:
    repo = unique_repo("published")
    manifest = write_release(
        tmp_path / "rel",
        {"model.safetensors": WEIGHTS, "notes.md": b"v1\n"},
        extra_manifest={"release": {"repo_id": repo, "license": "mit"}},
    )
    assert invoke(["push", str(manifest), "--endpoint", hub.url]).exit_code == 0
    return manifest, RepoKey("model", repo)


def _against(hub: LoopbackHub, manifest: Path) -> Published:
    api = api_for(hub)
    release = load_manifest(manifest)
    remote = read_remote(api, release)
    return against_published(api, build_plan(release, manifest, manifest.parent, remote), remote)


def test_a_published_file_deleted_on_the_hub_is_named(hub: LoopbackHub, tmp_path: Path) -> None:
    manifest, key = _published(hub, tmp_path)
    api_for(hub).delete_file("notes.md", key.repo_id)
    outside = _against(hub, manifest).outside
    assert [(f.kind, f.path) for f in outside] == [("missing", "notes.md")]


def test_a_file_added_on_the_hub_is_named_and_a_file_the_release_drops_is_not(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    manifest, key = _published(hub, tmp_path)
    api_for(hub).upload_file(path_or_fileobj=b"hello\n", path_in_repo="extra.txt", repo_id=key.repo_id)
    assert invoke(["rm", str(manifest), "notes.md"]).exit_code == 0  # this release drops notes.md
    published = _against(hub, manifest)
    assert [(f.kind, f.path) for f in published.outside] == [("unlisted", "extra.txt")]
    assert published.manifest == "hubrelease.yaml" and published.fetched_bytes > 0


def test_a_published_manifest_that_does_not_load_is_named(hub: LoopbackHub, tmp_path: Path) -> None:
    manifest, key = _published(hub, tmp_path)
    hub.store.replace_file(key, "main", "hubrelease.yaml", b"schema_version: 7\n")
    outside = _against(hub, manifest).outside
    assert [(f.kind, f.path) for f in outside] == [("unreadable", "hubrelease.yaml")]


def test_nothing_is_read_for_a_repo_that_does_not_exist(hub: LoopbackHub, tmp_path: Path) -> None:
    manifest = write_release(
        tmp_path / "new", extra_manifest={"release": {"repo_id": unique_repo("new"), "license": "mit"}}
    )
    assert _against(hub, manifest) == Published(None, None, (), 0)
