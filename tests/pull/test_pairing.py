"""A target folder whose config.json is not the pinned one is refused, each check with both values."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.faults import FILE_ROUTES
from tests.factories.cli import invoke
from tests.factories.published import publish_example


def test_a_target_folder_with_another_config_is_refused_naming_both_values(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    example = publish_example(hub, tmp_path)
    folder = shutil.copytree(example.target, tmp_path / "other-target")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    hidden = config["hidden_size"]
    (folder / "config.json").write_text(json.dumps({**config, "hidden_size": hidden * 2}), encoding="utf-8")
    hub.requests.clear()
    result = invoke(
        ["pull", example.repo, "--target", str(folder), "--dir", str(tmp_path / "d"), "--endpoint", hub.url]
    )
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert f"error: target hidden size: the release pins {hidden}, the target has {hidden * 2}" in lines
    assert any(line.startswith("error: config.json sha256: the release pins ") for line in lines)
    assert [r for r in hub.requests.on(FILE_ROUTES) if r.path.endswith(".safetensors")] == []
    assert not (tmp_path / "d").exists()


def test_a_target_that_is_neither_a_path_nor_a_repo_is_exit_2(hub: LoopbackHub, tmp_path: Path) -> None:
    example = publish_example(hub, tmp_path)
    result = invoke(["pull", example.repo, "--target", "no/such/thing.gguf", "--endpoint", hub.url])
    assert result.exit_code == 2
    assert (
        result.stderr
        == "error: --target 'no/such/thing.gguf': no such file or folder, and not REPO[@REVISION]\n"
    )
