"""The committed seed releases push to the loopback Hub as committed, and a newcomer's whole path
(init outside and inside the folder, add, render-card over a hand-written card, verify, push,
hf download, verify of the download, import, push of the import) closes, with the real
huggingface_hub client and `hf` CLI against the loopback Hub."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubrelease.manifest import load_manifest
from hubrelease.manifest.editor import ManifestEditor
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke, run_program
from tests.factories.hub import VENV_BIN, api_for, hf_env, unique_repo, upload_files
from tests.factories.seeds import SEEDS, small_seed


@pytest.mark.parametrize("name", SEEDS)
def test_committed_seed_pushes_with_its_unpinned_pins(
    name: str, repo_root: Path, tmp_path: Path, loopback_hub: LoopbackHub
) -> None:
    manifest = small_seed(repo_root, name, tmp_path, loopback_hub)
    release = load_manifest(manifest)
    assert any(p.unpinned for p in release.pins.targets)  # pushed as committed: no `lock`
    pushed = invoke(["push", manifest, "--endpoint", loopback_hub.url, "--json"])
    assert pushed.exit_code == 0, pushed.stderr + pushed.stdout
    card = (manifest.parent / "README.md").read_text(encoding="utf-8")
    assert "not pinned to a commit" in card
    if name == "ornith-1.0-dflash-gguf":
        assert "pinned by the sizes of 5 files" in card
        target = release.pins.targets[0]
        # The mutable target moves on: verify --remote checks the pinned sizes at its branch head.
        upload_files(api_for(loopback_hub), target.repo_id, {target.files[0].path: b"re-uploaded, longer\n"})
        drift = invoke(["verify", manifest, "--remote", "--endpoint", loopback_hub.url])
        assert drift.exit_code == 1
        assert "size mismatch on the Hub" in drift.stdout and target.files[0].path in drift.stdout


def test_newcomer_path_closes_the_round_trip(
    tmp_path: Path, loopback_hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", loopback_hub.owner_token)  # init writes private: true; as a user would
    folder = tmp_path / "my-drafter"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    (folder / "config.json").write_text('{"architectures": ["DFlashDraftModel"]}\n')
    (folder / "README.md").write_text("# My drafter\n\nWritten by hand.\n")
    repo = unique_repo("newcomer")
    # init outside the folder: the manifest records root, and add resolves FILE as typed.
    outside = tmp_path / "outside.yaml"
    assert invoke(["init", folder, "--out", outside, "--repo-id", repo, "--license", "mit"]).exit_code == 0
    (folder / "notes.md").write_text("notes\n")
    assert invoke(["add", outside, folder / "notes.md"]).exit_code == 0
    assert invoke(["verify", outside]).exit_code == 0
    # init inside the folder: the hand-written README is the card, pinned, not an artifact.
    manifest = folder / "hubrelease.yaml"
    init = invoke(["init", folder, "--repo-id", repo, "--license", "mit"])
    assert init.exit_code == 0, init.stderr
    release = load_manifest(manifest)
    assert release.card is not None and release.card.hand_written
    assert "README.md" not in {a.path for a in release.artifacts}
    # render-card over the hand-written card: refused without --force, then generated.
    editor = ManifestEditor.open(manifest)
    editor.section("card")["card"] = {"template": "safetensors_drafter", "summary": "A drafter."}
    editor.save()
    refused = invoke(["render-card", manifest])
    assert refused.exit_code == 2 and "was not written by render-card" in refused.stderr
    assert (folder / "README.md").read_text() == "# My drafter\n\nWritten by hand.\n"
    assert invoke(["render-card", manifest, "--force"]).exit_code == 0
    assert invoke(["render-card", manifest]).exit_code == 0  # its own card: replaced freely
    assert invoke(["verify", manifest]).exit_code == 0
    pushed = invoke(["push", manifest, "--endpoint", loopback_hub.url])
    assert pushed.exit_code == 0, pushed.stderr + pushed.stdout
    # hf download of the release verifies clean against its own published manifest.
    download = tmp_path / "download"
    env = {**hf_env(loopback_hub, tmp_path / "hf-home"), "HF_TOKEN": loopback_hub.owner_token}
    run_program(
        [str(VENV_BIN / "hf"), "download", repo, "--local-dir", str(download)],
        env=env,
        check=True,
    )
    attributes = download / ".gitattributes"
    if not attributes.exists():  # the real Hub adds one to every repo; hf download brings it
        attributes.write_text("*.safetensors filter=lfs diff=lfs merge=lfs -text\n")
    verified = invoke(["verify", download / "hubrelease.yaml"])
    assert verified.exit_code == 0, verified.stdout + verified.stderr
    # import restores the published manifest; a push of the unchanged import changes nothing.
    imported = download / "hubrelease.yaml"
    before = imported.read_bytes()
    result = invoke(["import", repo, "--out", imported, "--force", "--endpoint", loopback_hub.url])
    assert result.exit_code == 0, result.stderr
    assert "restored the published manifest" in result.stderr
    assert imported.read_bytes() == before
    again = invoke(["push", imported, "--endpoint", loopback_hub.url])
    assert again.exit_code == 0, again.stderr + again.stdout
    assert "nothing to push" in again.stderr


def test_a_manifest_outside_its_folder_is_published_without_root(
    tmp_path: Path, loopback_hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", loopback_hub.owner_token)  # init writes private: true
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights")
    manifest = tmp_path / "manifests" / "hubrelease.yaml"
    manifest.parent.mkdir()
    repo = unique_repo("rooted")
    assert invoke(["init", folder, "--out", manifest, "--repo-id", repo, "--license", "mit"]).exit_code == 0
    assert load_manifest(manifest).root == "../release"
    assert invoke(["render-card", manifest]).exit_code == 0  # written into the release folder, not beside M
    assert (folder / "README.md").is_file() and not (manifest.parent / "README.md").exists()
    pushed = invoke(["push", manifest, "--endpoint", loopback_hub.url])
    assert pushed.exit_code == 0, pushed.stderr + pushed.stdout
    download = tmp_path / "download"
    run_program(
        [str(VENV_BIN / "hf"), "download", repo, "--local-dir", str(download)],
        env={**hf_env(loopback_hub, tmp_path / "hf-home"), "HF_TOKEN": loopback_hub.owner_token},
        check=True,
    )
    published = download / "hubrelease.yaml"
    assert "root:" not in published.read_text(encoding="utf-8")
    assert load_manifest(published).root is None
    verified = invoke(["verify", published])
    assert verified.exit_code == 0, verified.stdout
    assert "nothing to push" in invoke(["push", manifest, "--endpoint", loopback_hub.url]).stderr
