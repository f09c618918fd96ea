"""`hubrelease lock` against the loopback Hub: branches -> commits, sizes and sha256 filled, comments kept."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke
from tests.factories.hub import api_for, unique_repo, upload_files

SHARD = b"\x02" * 5000


def _manifest(tmp_path: Path, target: str, dataset: str, config_size: str = "") -> Path:
    text = f"""schema_version: 1
# the release itself
release:
  repo_id: acme/locked-drafter
  license: mit
pins:
  targets:
    - repo_id: {target}  # the served model
      revision: main
      files:
        - path: model.safetensors
        - path: config.json{config_size}
  datasets:
    - repo_id: {dataset}
      revision: main
      license: cc-by-4.0
"""
    path = tmp_path / "hubrelease.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _setup(hub: LoopbackHub) -> tuple[str, str, str, str]:
    api = api_for(hub)
    target, dataset = unique_repo("target"), unique_repo("data")
    commit = upload_files(api, target, {"model.safetensors": SHARD, "config.json": b"{}\n"})
    data_commit = upload_files(api, dataset, {"data/train.parquet": b"PAR1"}, repo_type="dataset")
    return target, dataset, commit, data_commit


def test_lock_resolves_branches_and_fills_files_keeping_comments(hub: LoopbackHub, tmp_path: Path) -> None:
    target, dataset, commit, data_commit = _setup(hub)
    path = _manifest(tmp_path, target, dataset)
    result = invoke(["lock", str(path), "--endpoint", hub.url])
    assert result.exit_code == 0, result.stderr
    assert f"{target}: revision main -> {commit}" in result.stdout
    assert f"warning: {target}@{commit[:12]}:config.json: regular file on the Hub" in result.stderr
    text = path.read_text()
    assert "# the release itself" in text and f"- repo_id: {target}  # the served model" in text
    assert f"revision: {commit} # locked from main" in text
    manifest = load_manifest(path)
    pin = manifest.pins.targets[0]
    assert pin.revision == commit and not pin.unpinned
    assert [(f.path, f.size, f.sha256) for f in pin.files] == [
        ("model.safetensors", 5000, hashlib.sha256(SHARD).hexdigest()),
        ("config.json", 3, None),
    ]
    assert manifest.pins.datasets[0].revision == data_commit
    again = invoke(["lock", str(path), "--endpoint", hub.url])
    assert again.exit_code == 0 and "already locked" in again.stderr
    assert path.read_text() == text


def test_lock_dry_run_json_writes_nothing(hub: LoopbackHub, tmp_path: Path) -> None:
    target, dataset, commit, _ = _setup(hub)
    path = _manifest(tmp_path, target, dataset)
    before = path.read_text()
    result = invoke(["lock", str(path), "--dry-run", "--json", "--endpoint", hub.url])
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["schema_version"] == 1 and payload["written"] is False
    assert payload["changes"][0] == {"pin": target, "field": "revision", "old": "main", "new": commit}
    assert payload["size_only"] == [f"{target}@{commit[:12]}:config.json"]
    assert path.read_text() == before


def test_lock_refuses_to_overwrite_a_value_the_hub_contradicts(hub: LoopbackHub, tmp_path: Path) -> None:
    target, dataset, commit, _ = _setup(hub)
    path = _manifest(tmp_path, target, dataset, config_size="\n          size: 7")
    before = path.read_text()
    result = invoke(["lock", str(path), "--endpoint", hub.url])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"error: size: {target}@{commit[:12]}:config.json: the Hub has size 3, the manifest pins 7; not overwriting"
    )
    assert path.read_text() == before


def test_lock_unknown_repo_exits_2(hub: LoopbackHub, tmp_path: Path) -> None:
    path = _manifest(tmp_path, "acme/not-there", "acme/not-there-either")
    result = invoke(["lock", str(path), "--endpoint", hub.url])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: acme/not-there: repository not found"


def test_lock_keeps_every_comment_where_it_was(hub: LoopbackHub, tmp_path: Path) -> None:
    target, dataset, commit, data_commit = _setup(hub)
    head = f"""schema_version: 1
release:
  repo_id: acme/locked-drafter
  license: mit
pins:
  targets:
    - repo_id: {target}
"""
    tail = """
  # engines used for the benchmarks
  engines:
    - name: sglang
      repository: https://github.com/sgl-project/sglang
      commit: 710267dc4c817b38d9965346390cd56b59b54eda
"""
    path = tmp_path / "hubrelease.yaml"
    path.write_text(
        head
        + f"""      revision: main   # follow main for now
      unpinned: true
      # the shards we serve
      files:
        - path: model.safetensors
        # the config is small
        - path: config.json
          # size comes from lock
  datasets:
    - repo_id: {dataset}
      license: cc-by-4.0
      revision: main
      unpinned: true
"""
        + tail,
        encoding="utf-8",
    )
    result = invoke(["lock", str(path), "--endpoint", hub.url, "--pin", target, "--pin", dataset])
    assert result.exit_code == 0, result.stderr
    assert path.read_text() == head + (
        f"""      revision: {commit} # follow main for now; locked from main
      # the shards we serve
      files:
        - path: model.safetensors
          size: 5000
          sha256: {hashlib.sha256(SHARD).hexdigest()}
        # the config is small
        - path: config.json
          size: 3
          # size comes from lock
  datasets:
    - repo_id: {dataset}
      license: cc-by-4.0
      revision: {data_commit} # locked from main
"""
        + tail
    )


_HEAD = "schema_version: 1\nrelease: {repo_id: acme/locked-drafter, license: mit}\npins:\n  targets:\n"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "    - {{repo_id: {target}, revision: main, unpinned: true}}  # flow\n",
            "    - {{repo_id: {target}, revision: {commit}}} # flow\n",
            id="flow-style pin: no comment inside {...}",
        ),
        pytest.param(
            "    - repo_id: {target}\n      revision: main\n",
            "    - repo_id: {target}\n      revision: {commit}  # locked from main\n",
            id="branch not marked unpinned: validation alone says 'hubrelease lock resolves branches'",
        ),
    ],
)
def test_lock_rewrites_just_the_pin(hub: LoopbackHub, tmp_path: Path, before: str, after: str) -> None:
    target, _, commit, _ = _setup(hub)
    path = tmp_path / "hubrelease.yaml"
    path.write_text(_HEAD + before.format(target=target))
    result = invoke(["lock", str(path), "--endpoint", hub.url, "--pin", target])
    assert result.exit_code == 0, result.stderr
    assert path.read_text() == _HEAD + after.format(target=target, commit=commit)


def test_lock_on_malformed_pins_is_a_validation_error(hub: LoopbackHub, tmp_path: Path) -> None:
    path = tmp_path / "hubrelease.yaml"
    path.write_text(_HEAD.replace("  targets:\n", "  targets: 5\n"))
    result = invoke(["lock", str(path), "--endpoint", hub.url])
    assert result.exit_code == 2 and result.stderr.startswith(f"error: {path}:4: pins.targets")


def test_lock_keeps_pins_marked_unpinned_as_they_are_and_says_so(hub: LoopbackHub, tmp_path: Path) -> None:
    target, dataset, _, _ = _setup(hub)
    path = _manifest(tmp_path, target, dataset)
    text = path.read_text().replace(
        "      revision: main\n      files:", "      revision: main\n      unpinned: true\n      files:"
    )
    path.write_text(text)
    hub.requests.clear()
    result = invoke(["lock", str(path), "--endpoint", hub.url, "--json"])
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["kept_unpinned"] == [target] and payload["removed_comments"] == []
    assert [c["pin"] for c in payload["changes"]] == [dataset]  # only the branch not marked unpinned
    assert not any(target in r.path for r in hub.requests.records)  # the kept pin is not even looked up
    human = invoke(["lock", str(path), "--endpoint", hub.url])
    assert human.exit_code == 0
    assert f"{target}: kept as it is (unpinned: true); `--pin {target}` pins it to a commit" in human.stderr
    pin = load_manifest(path).pins.targets[0]
    assert (pin.revision, pin.unpinned, [f.size for f in pin.files]) == ("main", True, [None, None])


def test_lock_pin_converts_one_unpinned_pin_and_removes_the_comment_that_explained_it(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    target, dataset, commit, data_commit = _setup(hub)
    other = unique_repo("other")
    upload_files(api_for(hub), other, {"config.json": b"{}\n"})
    path = tmp_path / "hubrelease.yaml"
    path.write_text(
        f"""{_HEAD}    # Mutable repo: the revision was not recorded, so sizes are the only pin.
    - repo_id: {target}
      revision: main
      unpinned: true
    # Also mutable; kept.
    - repo_id: {other}
      revision: main
      unpinned: true
    # Pinned on purpose later.
    - repo_id: {dataset}
      repo_type: dataset
      revision: main
      unpinned: true
"""
    )
    result = invoke(["lock", str(path), "--endpoint", hub.url, "--pin", target, "--pin", dataset, "--json"])
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["kept_unpinned"] == [other]
    assert payload["removed_comments"] == [
        {"pin": target, "text": "# Mutable repo: the revision was not recorded, so sizes are the only pin."},
        {"pin": dataset, "text": "# Pinned on purpose later."},
    ]
    assert {"pin": target, "field": "unpinned", "old": True, "new": False} in payload["changes"]
    human = invoke(["lock", str(path), "--endpoint", hub.url, "--pin", other, "--dry-run"])
    assert f"{other}: unpinned: true dropped" in human.stdout.splitlines()
    assert path.read_text() == (
        f"""{_HEAD}    - repo_id: {target}
      revision: {commit} # locked from main
    # Also mutable; kept.
    - repo_id: {other}
      revision: main
      unpinned: true
    - repo_id: {dataset}
      repo_type: dataset
      revision: {data_commit}  # locked from main
"""
    )


def test_lock_pin_of_an_unknown_repo_is_a_usage_error(hub: LoopbackHub, tmp_path: Path) -> None:
    target, dataset, _, _ = _setup(hub)
    path = _manifest(tmp_path, target, dataset)
    before = path.read_text()
    result = invoke(["lock", str(path), "--endpoint", hub.url, "--pin", "acme/typo"])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {path}: pins: --pin acme/typo: no pin has that repo_id"
    assert path.read_text() == before


def test_lock_leaves_seed_001_as_it_is(hub: LoopbackHub, tmp_path: Path, repo_root: Path) -> None:
    """Every pin of seed 001 is unpinned on purpose; none of its repos exists on this Hub, and none is asked for."""
    path = tmp_path / "hubrelease.yaml"
    seed = (repo_root / "manifests" / "ornith-1.0-dflash-gguf" / "hubrelease.yaml").read_bytes()
    path.write_bytes(seed)
    hub.requests.clear()
    result = invoke(["lock", str(path), "--endpoint", hub.url, "--json"])
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["written"] is False and payload["changes"] == []
    assert payload["kept_unpinned"] == [
        "paragon-of-brah/Ornith-1.0-397B-DFLASH-GGUF",
        "deepreinforce-ai/Ornith-1.0-397B",
        "z-lab/Qwen3.5-397B-A17B-DFlash",
        "hubrelease-seeds/Ornith-1.0-coding-prompts",
    ]
    assert path.read_bytes() == seed and hub.requests.count() == 0
