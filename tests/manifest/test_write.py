"""Round-trip edits keep everything outside the edited entry byte for byte."""

from __future__ import annotations

from pathlib import Path

from hubrelease.manifest.write import load_tree, remove_artifacts, save_tree, upsert_artifact

TEXT = """\
# header comment
schema_version: 1
release:
  repo_id: acme/x   # where it goes
  license: mit

artifacts:
  # the weights
  - path: a.bin
    size: 1
    sha256: 0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a

# trailing section comment
evaluations: []
"""

DIGEST = "1f" * 32


def test_update_existing_and_append_keep_comments_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "hubrelease.yaml"
    path.write_text(TEXT)
    tree = load_tree(path)
    assert upsert_artifact(tree, {"path": "a.bin", "size": 2, "sha256": DIGEST}) == {
        "size": 1,
        "sha256": "0a" * 32,
    }
    assert upsert_artifact(tree, {"path": "b.bin", "size": 3, "sha256": DIGEST, "role": "doc"}) is None
    save_tree(tree, path)
    assert path.read_text() == TEXT.replace(
        "size: 1\n    sha256: " + "0a" * 32, f"size: 2\n    sha256: {DIGEST}"
    ).replace(
        "\n\n# trailing",
        f"\n  - path: b.bin\n    size: 3\n    sha256: {DIGEST}\n    role: doc\n\n# trailing",
    )


def test_remove_reports_unknown_paths(tmp_path: Path) -> None:
    path = tmp_path / "hubrelease.yaml"
    path.write_text(TEXT)
    tree = load_tree(path)
    assert remove_artifacts(tree, ["a.bin", "nope.bin"]) == ["nope.bin"]
    save_tree(tree, path)
    assert "a.bin" not in path.read_text()
    assert path.read_text().startswith("# header comment\n")


def test_invalid_in_memory_edit_is_reported_with_the_parent_line(tmp_path: Path) -> None:
    import pytest

    from hubrelease.errors import ManifestError

    path = tmp_path / "hubrelease.yaml"
    path.write_text(TEXT)
    tree = load_tree(path)
    upsert_artifact(tree, {"path": "../escape.bin", "size": 1, "sha256": DIGEST})
    with pytest.raises(ManifestError) as info:
        save_tree(tree, path)
    assert info.value.field == "artifacts[1].path"
    assert info.value.line == 7  # the `artifacts:` key; the new entry has no line of its own
    assert path.read_text() == TEXT  # nothing written
