"""`push` warns when it would replace a published model file in place with another architecture."""

from __future__ import annotations

from pathlib import Path

from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke
from tests.factories.drafters import drafter_config, write_checkpoint
from tests.factories.hub import unique_repo
from tests.factories.releases import write_release


def _write(folder: Path, repo: str, layers: int, seed: int = 0) -> Path:
    checkpoint = write_checkpoint(
        folder.parent / f"ck-{layers}-{seed}", config=drafter_config(layers=layers), seed=seed
    )
    files = {"model.safetensors": (checkpoint / "checkpoint-0.safetensors").read_bytes()}
    return write_release(folder, files, extra_manifest={"release": {"repo_id": repo, "license": "mit"}})


def _push(hub: LoopbackHub, manifest: Path, *args: str) -> tuple[int, str]:
    result = invoke(["push", str(manifest), "--endpoint", hub.url, *args])
    return result.exit_code, result.stderr


def test_replacing_a_file_with_other_layers_under_its_name_warns(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    folder = tmp_path / "release"
    assert _push(hub, _write(folder, repo, layers=2))[0] == 0
    code, err = _push(hub, _write(folder, repo, layers=3), "--dry-run")
    assert code == 0, err
    assert (
        "warning: model.safetensors: replaces the published file in place with another architecture "
        "(layers 2 -> 3)" in err
    )


def test_new_weights_of_the_same_architecture_do_not_warn(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    folder = tmp_path / "release"
    assert _push(hub, _write(folder, repo, layers=2))[0] == 0
    code, err = _push(hub, _write(folder, repo, layers=2, seed=1), "--dry-run")
    assert code == 0, err
    assert "another architecture" not in err
