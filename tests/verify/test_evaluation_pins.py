"""Evaluation files, the source of every number in the card, are pinned like artifacts."""

from __future__ import annotations

from pathlib import Path

from hubrelease.hashing import sha256_file
from hubrelease.manifest import load_manifest
from hubrelease.manifest.editor import ManifestEditor
from hubrelease.onboarding.init import InitOptions, init_manifest
from tests.factories.cli import invoke
from tests.factories.onboarding import write_author_folder


def test_an_edited_evaluation_file_fails_verify_and_is_in_checksums_and_the_card(tmp_path: Path) -> None:
    root = write_author_folder(tmp_path / "rel", symlink=False)
    manifest = root / "hubrelease.yaml"
    init_manifest(InitOptions(root=root, out=manifest, repo_id="acme/x"))
    [evaluation] = load_manifest(manifest).evaluation_files
    assert evaluation.sha256 == sha256_file(root / evaluation.path)
    sums = invoke(["checksums", str(manifest)])
    assert sums.exit_code == 0
    assert f"{evaluation.sha256}  {evaluation.path}" in sums.stdout.splitlines()
    editor = ManifestEditor.open(manifest)
    editor.section("card")["card"] = {"template": "safetensors_drafter"}  # generated, not hand-written
    editor.save()
    rendered = invoke(["render-card", str(manifest), "--force"])
    assert rendered.exit_code == 0, rendered.stderr
    assert f"{evaluation.sha256}  {evaluation.path}" in (root / "README.md").read_text()
    assert invoke(["verify", str(manifest)]).exit_code == 0
    path = root / evaluation.path
    path.write_text(path.read_text().replace("1", "2"))  # a number changed, same size
    result = invoke(["verify", str(manifest), "--no-cache"])
    assert result.exit_code == 1
    assert "digest_mismatch" in result.stdout and evaluation.path in result.stdout
