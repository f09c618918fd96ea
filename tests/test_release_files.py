"""What a release publishes, defined once: the files, their kinds and pins, in push order."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubrelease.errors import InputError
from hubrelease.manifest import load_manifest
from hubrelease.release_files import FileCount, ReleaseFile, count_files, published_paths, release_files
from tests.factories.cards import write_card_release
from tests.factories.releases import write_release


def test_a_card_release_publishes_artifacts_evaluations_card_and_manifest(tmp_path: Path) -> None:
    manifest = write_card_release(tmp_path)
    files = release_files(load_manifest(manifest), manifest, tmp_path)
    assert [(f.path, f.kind) for f in files] == [
        ("model.safetensors", "artifact"),
        ("config.json", "artifact"),
        ("eval/matrix.json", "evaluation"),
        ("README.md", "rendered_card"),  # published whether or not render-card has run yet
        ("hubrelease.yaml", "manifest"),
    ]
    assert files[0].size == 1507 and files[0].sha256 is not None
    assert (files[2].size, files[2].sha256) == (None, None)  # a bare evaluation path pins nothing
    assert published_paths(files) == {f.path for f in files} | {".gitattributes"}


def test_without_a_card_section_readme_is_published_only_when_present(tmp_path: Path) -> None:
    manifest = write_release(tmp_path, {"a.bin": b"a"})
    release = load_manifest(manifest)
    assert [f.kind for f in release_files(release, manifest, tmp_path)] == ["artifact", "manifest"]
    (tmp_path / "README.md").write_text("# hi\n", encoding="utf-8")
    assert [f.kind for f in release_files(release, manifest, tmp_path)] == [
        "artifact",
        "rendered_card",
        "manifest",
    ]
    assert [f.kind for f in release_files(release, manifest, None)] == ["artifact", "manifest"]


def test_a_hand_written_card_carries_its_pins_and_artifacts_keep_their_local_path(tmp_path: Path) -> None:
    card = {"template": "none", "size": 5, "sha256": "a" * 64}
    manifest = write_release(tmp_path, {"w.bin": b"w"}, extra_manifest={"card": card})
    text = manifest.read_text(encoding="utf-8").replace(
        "- path: w.bin", "- path: weights/w.bin\n  local: w.bin"
    )
    manifest.write_text(text, encoding="utf-8")
    files = release_files(load_manifest(manifest), manifest)
    assert files[0] == ReleaseFile("weights/w.bin", "w.bin", "artifact", 1, files[0].sha256)
    assert files[1] == ReleaseFile("README.md", "README.md", "card", 5, "a" * 64)


def test_a_manifest_named_like_a_published_file_is_refused(tmp_path: Path) -> None:
    manifest = write_release(tmp_path, {"notes.yaml": b"x"}, manifest_name="notes.yaml")
    with pytest.raises(InputError, match="collides with a published file"):
        release_files(load_manifest(manifest), manifest, tmp_path)


def test_a_release_is_counted_one_way_whichever_part_a_command_compared(tmp_path: Path) -> None:
    """Local verify compares the pinned files, sign and ``verify --remote`` the manifest too, push's
    plan also ``model.sig``: each is the release's count, the signature told apart."""
    manifest = write_card_release(tmp_path)
    paths = [f.path for f in release_files(load_manifest(manifest), manifest, tmp_path)]
    pinned = [p for p in paths if p != "hubrelease.yaml"]
    one = FileCount(files=len(paths), pinned=len(pinned), signature=False)
    assert count_files(pinned, manifest) == one  # verify
    assert count_files(paths, manifest) == one  # sign, verify --remote
    assert count_files([*paths, "model.sig"], manifest) == one._replace(signature=True)  # push's plan
