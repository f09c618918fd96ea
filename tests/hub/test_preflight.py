"""Push preflight: honest unpinned pins are published; an unmarked branch and unpinned cards are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubrelease.errors import CheckFailed
from hubrelease.hub.preflight import preflight, unpinned_revisions
from hubrelease.manifest import load_manifest
from hubrelease.manifest.models import Manifest, PinnedRepo, Pins
from tests.factories.releases import write_release


def test_marked_pins_pass_and_an_unmarked_branch_is_refused(tmp_path: Path) -> None:
    pins = {"targets": [{"repo_id": "acme/target", "revision": "main", "unpinned": True, "files": [
        {"path": "t-00001-of-00002.gguf", "size": 10}, {"path": "t-00002-of-00002.gguf", "size": 11}]}]}  # fmt: skip
    manifest = write_release(tmp_path, {"a.bin": b"a"}, extra_manifest={"pins": pins})
    release = load_manifest(manifest)
    assert unpinned_revisions(release) == []
    preflight(release, manifest, tmp_path)  # no `lock` needed: the card states what it is
    # The models refuse an unmarked branch; one built in code is refused by preflight too.
    branch = PinnedRepo.model_construct(repo_id="acme/target", revision="main", unpinned=False)
    built = release.model_copy(update={"pins": Pins.model_construct(targets=[branch])})
    assert isinstance(built, Manifest) and unpinned_revisions(built) == ["acme/target@main"]
    with pytest.raises(CheckFailed, match="unpinned revision"):
        preflight(built, manifest, tmp_path)


def test_a_readme_neither_rendered_nor_pinned_is_not_published(tmp_path: Path) -> None:
    manifest = write_release(tmp_path, {"a.bin": b"a"})
    (tmp_path / "README.md").write_text("# hand-written, not pinned\n")
    with pytest.raises(CheckFailed, match="neither rendered by render-card nor pinned"):
        preflight(load_manifest(manifest), manifest, tmp_path)
