"""The card's "Changes since" section renders only from the pinned changes.json of the superseded release."""

from __future__ import annotations

import hashlib
from pathlib import Path

from hubrelease.card.changes import changes_document
from tests.factories.cli import invoke
from tests.factories.releases import write_release

SINCE = "acme/drafter@" + "a" * 40
CHANGES = [{"section": "architecture", "subject": "model.safetensors", "detail": "layers 2 -> 3"}]


def _release(tmp_path: Path, since: str = SINCE, supersedes: str | None = SINCE) -> Path:
    release: dict[str, object] = {"repo_id": "acme/drafter", "license": "mit"}
    if supersedes is not None:
        release["supersedes"] = supersedes
    files = {"model.bin": b"weights", "changes.json": changes_document(since, CHANGES)}
    return write_release(tmp_path / "r", files, extra_manifest={"release": release})


def _card(manifest: Path) -> tuple[int, str, str]:
    result = invoke(["render-card", str(manifest)])
    readme = manifest.parent / "README.md"
    return result.exit_code, readme.read_text(encoding="utf-8") if readme.exists() else "", result.stderr


def test_section_lists_the_recorded_changes(tmp_path: Path) -> None:
    code, card, err = _card(_release(tmp_path))
    assert code == 0, err
    assert f"## Changes since {SINCE}" in card
    assert "| architecture | `model.safetensors` | layers 2 -> 3 |" in card


def test_no_section_without_supersedes(tmp_path: Path) -> None:
    code, card, err = _card(_release(tmp_path, supersedes=None))
    assert code == 0, err
    assert "## Changes since" not in card


def test_a_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    manifest = _release(tmp_path)
    edited = changes_document(SINCE, [{**CHANGES[0], "detail": "layers 2 -> 2"}])
    (manifest.parent / "changes.json").write_bytes(edited)
    assert hashlib.sha256(edited).hexdigest() not in manifest.read_text(encoding="utf-8")
    code, _, err = _card(manifest)
    assert code == 2
    assert "changes.json is not the file the manifest pins" in err


def test_changes_since_another_release_are_refused(tmp_path: Path) -> None:
    other = "acme/drafter@" + "b" * 40
    code, _, err = _card(_release(tmp_path, since=other))
    assert code == 2
    assert f"records changes since {other}, but release.supersedes is {SINCE}" in err
