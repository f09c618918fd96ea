"""``lint_location``: what the lint command gets back as data, the warnings included (the library prints nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from huggingface_hub import HfApi

from hubrelease.builders.safetensors_drafter import build_safetensors_drafter
from hubrelease.errors import HubUnavailable
from hubrelease.hub.lint_location import lint_location
from tests.factories.drafters import write_checkpoint
from tests.factories.releases import write_release

COMMIT = "a" * 40


def _release(root: Path, revision: str) -> Path:
    """A safetensors drafter marked for lint, pinning a target at ``revision`` (no header pin)."""
    ck = write_checkpoint(root / "ck")
    build_safetensors_drafter(ck, root / "rel")
    files = {p.name: p.read_bytes() for p in sorted((root / "rel").iterdir())}
    pin: dict[str, object] = {"repo_id": "acme/target", "revision": revision, "license": "apache-2.0"}
    if revision == "main":
        pin["unpinned"] = True
    manifest = write_release(root / "rel", files, extra_manifest={"pins": {"targets": [pin]}})
    data = yaml.safe_load(manifest.read_text())
    for artifact in data["artifacts"]:
        if artifact["path"] == "model.safetensors":
            artifact.update(lint=True, lint_config="config.json")
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))
    return manifest


def test_a_target_pinned_by_branch_is_a_warning_in_the_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = _release(tmp_path, "main")
    result = lint_location(str(manifest), hub=lambda: HfApi(endpoint="http://127.0.0.1:9"))
    assert result.warnings == [
        "acme/target@main: nothing pins the target's bytes (no commit, no header pin): linted without its "
        "depth and width (`hubrelease lock` pins it, or give --target)"
    ]
    assert result.errors == 0 and result.traffic is None
    assert capsys.readouterr() == ("", "")


def test_an_unreachable_hub_lints_the_files_and_says_what_waits(tmp_path: Path) -> None:
    manifest = _release(tmp_path, COMMIT)

    def down() -> HfApi:
        raise HubUnavailable("connection refused")

    result = lint_location(str(manifest), hub=down)
    assert result.warnings == [
        "the pinned target was not read (connection refused): linted without its depth and width"
    ]
    assert result.errors == 0


def test_a_given_target_is_read_without_the_hub(tmp_path: Path) -> None:
    manifest = _release(tmp_path, COMMIT)
    target = tmp_path / "target-config.json"
    target.write_text(json.dumps({"num_hidden_layers": 2, "hidden_size": 64, "vocab_size": 512}))

    def never() -> HfApi:
        raise AssertionError("the Hub was asked for")

    result = lint_location(str(manifest), target=str(target), hub=never)
    assert result.warnings == []
    assert any(f.finding.rule_id == "target-layers" for f in result.findings)
