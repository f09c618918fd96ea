"""`hubrelease diff`: two releases that differ in layer count, compared as local manifests, as two commits of
one repo (headers read with range requests) and as a local release against its published one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke
from tests.factories.drafters import drafter_config, write_checkpoint
from tests.factories.hub import api_for, unique_repo, upload_release
from tests.factories.releases import write_release


def _release(folder: Path, repo: str, layers: int, licence: str = "apache-2.0") -> Path:
    """A drafter release (model.safetensors + config.json) with ``layers`` decoder layers."""
    checkpoint = write_checkpoint(folder.parent / f"ck-{folder.name}", config=drafter_config(layers=layers))
    files = {
        "model.safetensors": (checkpoint / "checkpoint-0.safetensors").read_bytes(),
        "config.json": (checkpoint / "config.json").read_bytes(),
    }
    return write_release(folder, files, extra_manifest={"release": {"repo_id": repo, "license": licence}})


def _diff(*args: str) -> tuple[int, dict[str, Any], str]:
    result = invoke(["diff", *args, "--json"])
    return result.exit_code, json.loads(result.stdout or "{}"), result.stderr


def _architecture(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(c["subject"], c["detail"]) for c in report["changes"] if c["section"] == "architecture"}


def test_two_local_releases_that_differ_in_layer_count_name_it(tmp_path: Path) -> None:
    old = _release(tmp_path / "old", "acme/drafter", layers=2)
    new = _release(tmp_path / "new", "acme/drafter", layers=3, licence="mit")
    code, report, err = _diff(str(old), str(new))
    assert code == 1, err
    assert {
        (c["subject"], c["detail"].split(":")[0]) for c in report["changes"] if c["section"] == "file"
    } == {
        ("model.safetensors", "changed"),
        ("config.json", "changed"),
    }
    assert _architecture(report) == {("model.safetensors", "layers 2 -> 3"), ("config.json", "layers 2 -> 3")}
    assert [(c["subject"], c["old"], c["new"]) for c in report["changes"] if c["section"] == "licence"] == [
        ("license", "apache-2.0", "mit")
    ]


def test_the_same_release_is_exit_0(tmp_path: Path) -> None:
    old = _release(tmp_path / "old", "acme/drafter", layers=2)
    code, report, _ = _diff(str(old), str(old))
    assert code == 0 and report["same"] is True and report["changes"] == []


def test_two_commits_of_one_repo_and_a_local_release_against_its_published_one(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo = unique_repo()
    old = _release(tmp_path / "old", repo, layers=2)
    new = _release(tmp_path / "new", repo, layers=3)
    first = upload_release(api_for(hub), repo, old.parent, old)
    second = upload_release(api_for(hub), repo, new.parent, new)
    code, report, err = _diff(f"{repo}@{first}", f"{repo}@{second}", "--endpoint", hub.url)
    assert code == 1, err
    assert ("model.safetensors", "layers 2 -> 3") in _architecture(report)
    published_then_local = _release(tmp_path / "newer", repo, layers=4)
    code, report, err = _diff(str(published_then_local), "--endpoint", hub.url)
    assert code == 1, err
    assert report["old"] == f"{repo}@{second[:12]}"
    assert ("model.safetensors", "layers 3 -> 4") in _architecture(report)


def test_one_argument_compares_with_the_release_it_supersedes(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    old = _release(tmp_path / "old", repo, layers=2)
    first = upload_release(api_for(hub), repo, old.parent, old)
    upload_release(
        api_for(hub), repo, old.parent, _release(tmp_path / "old", repo, layers=3)
    )  # main moves on
    new = write_release(
        tmp_path / "new",
        {name: (tmp_path / "old" / name).read_bytes() for name in ("model.safetensors", "config.json")},
        extra_manifest={
            "release": {"repo_id": repo, "license": "apache-2.0", "supersedes": f"{repo}@{first}"}
        },
    )
    code, report, err = _diff(str(new), "--endpoint", hub.url)
    assert code == 1, err
    assert report["old"] == f"{repo}@{first[:12]}"  # not main's head
    assert ("model.safetensors", "layers 2 -> 3") in _architecture(report)


def test_supersedes_must_pin_a_commit(tmp_path: Path) -> None:
    manifest = write_release(
        tmp_path / "r",
        {"a.bin": b"a"},
        extra_manifest={"release": {"repo_id": "acme/x", "license": "mit", "supersedes": "acme/x@main"}},
    )
    result = invoke(["diff", str(manifest), str(manifest)])
    assert result.exit_code == 2
    assert "release.supersedes: 'acme/x@main' is not REPO@COMMIT" in result.stderr


def test_record_pins_the_changes_the_card_renders_offline(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    old = _release(tmp_path / "old", repo, layers=2)
    first = upload_release(api_for(hub), repo, old.parent, old)
    newer = _release(tmp_path / "newer", repo, layers=3)
    new = write_release(
        tmp_path / "new",
        {name: (newer.parent / name).read_bytes() for name in ("model.safetensors", "config.json")},
        extra_manifest={
            "release": {"repo_id": repo, "license": "apache-2.0", "supersedes": f"{repo}@{first}"}
        },
    )
    result = invoke(["diff", str(new), "--record", "--endpoint", hub.url])
    assert result.exit_code == 0, result.stderr
    recorded = (tmp_path / "new" / "changes.json").read_bytes()
    document = json.loads(recorded)
    assert document["since"] == f"{repo}@{first}"
    assert {(c["subject"], c["detail"]) for c in document["changes"]} >= {
        ("model.safetensors", "layers 2 -> 3")
    }
    assert "changes.json" not in {c["subject"] for c in document["changes"]}
    again = invoke(["diff", str(new), "--record", "--endpoint", hub.url])
    assert again.exit_code == 0, again.stderr
    assert (tmp_path / "new" / "changes.json").read_bytes() == recorded  # its own pin is not a change
    rendered = invoke(["render-card", str(new)])  # offline: no endpoint
    assert rendered.exit_code == 0, rendered.stderr
    card = (tmp_path / "new" / "README.md").read_text(encoding="utf-8")
    assert f"## Changes since {repo}@{first}" in card
    assert "| architecture | `model.safetensors` | layers 2 -> 3 |" in card


def test_record_needs_a_superseded_release(tmp_path: Path) -> None:
    manifest = _release(tmp_path / "r", "acme/drafter", layers=2)
    result = invoke(["diff", str(manifest), "--record"])
    assert result.exit_code == 2
    assert "release.supersedes is not set" in result.stderr
