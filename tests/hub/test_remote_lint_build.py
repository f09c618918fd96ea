"""`lint hf://...` and `build gguf-drafter --tokenizer-from hf://...`: the local results, from header reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.faults import FILE_ROUTES
from tests.factories.cli import run_cli
from tests.factories.drafters import write_checkpoint
from tests.factories.hub import api_for, logged, unique_repo, upload_files
from tests.factories.split_models import write_ik_split_target, write_sharded_safetensors


@pytest.fixture(scope="module")
def published(loopback_hub: LoopbackHub, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A target split set and a drafter repo (ik GGUF + config.json + sharded safetensors) on the Hub."""
    root = tmp_path_factory.mktemp("remote-lint")
    shards = write_ik_split_target(root / "target")
    checkpoint = write_checkpoint(root / "ck")
    code, _, err = run_cli(
        "build", "gguf-drafter", str(checkpoint), "--flavor", "ik", "--outtype", "q8_0",
        "--tokenizer-from", str(shards[0]), "--out", str(root / "drafter" / "gguf" / "drafter-q8_0.gguf"),
    )  # fmt: skip
    assert code == 0, err
    write_sharded_safetensors(root / "drafter")
    api = api_for(loopback_hub)
    repo = unique_repo("drafter")
    upload_files(
        api,
        repo,
        {
            p.relative_to(root / "drafter").as_posix(): p.read_bytes()
            for p in (root / "drafter").rglob("*")
            if p.is_file()
        },
    )
    upload_files(api, repo + "-target", {p.name: p.read_bytes() for p in shards})
    return root, repo


def _same(remote: str, local: str, remote_path: str, local_path: str) -> dict[str, object]:
    ours, theirs = json.loads(remote), json.loads(local)
    assert (ours.pop("path"), theirs.pop("path")) == (remote_path, local_path)
    stats = {k: ours.pop(k) for k in ("requests", "fetched_bytes")}
    assert ours == theirs
    return stats


def test_lint_of_a_hub_gguf_with_a_hub_config_matches_local(
    hub: LoopbackHub, published: tuple[Path, str]
) -> None:
    root, repo = published
    local = root / "drafter" / "gguf" / "drafter-q8_0.gguf"
    code, theirs, _ = run_cli("lint", str(local), "--config", str(root / "drafter" / "config.json"), "--json")
    uri = f"hf://{repo}/gguf/drafter-q8_0.gguf"
    code_remote, ours, err = run_cli(
        "lint", uri, "--config", f"hf://{repo}/config.json", "--endpoint", hub.url, "--json"
    )
    assert (code_remote, code) == (0, 0), err
    stats = _same(ours, theirs, uri, str(local))
    assert stats["requests"] == len(logged(hub, "resolve", 2)) == 2  # the GGUF header + config.json


def test_lint_of_a_hub_safetensors_folder_fetches_its_config(
    hub: LoopbackHub, published: tuple[Path, str]
) -> None:
    root, repo = published
    code, theirs, _ = run_cli("lint", str(root / "drafter"), "--json")
    code_remote, ours, err = run_cli("lint", f"hf://{repo}", "--endpoint", hub.url, "--json")
    assert (code_remote, code) == (0, 0), err
    _same(ours, theirs, f"hf://{repo}", str(root / "drafter"))
    assert any("config.json" in r.path for r in hub.requests.records if r.route == "resolve")


def test_tokenizer_from_the_hub_builds_the_same_bytes(
    hub: LoopbackHub, published: tuple[Path, str], tmp_path: Path
) -> None:
    root, repo = published
    target = sorted((root / "target").glob("*.gguf"))[0]
    checkpoint = root / "ck"
    args = ["build", "gguf-drafter", str(checkpoint), "--flavor", "ik", "--outtype", "q8_0"]
    code, _, err = run_cli(*args, "--tokenizer-from", str(target), "--out", str(tmp_path / "local.gguf"))
    assert code == 0, err
    hub.requests.clear()
    uri = f"hf://{repo}-target/{target.name}"
    manifest = tmp_path / "hubrelease.yaml"
    manifest.write_text("schema_version: 1\nrelease:\n  repo_id: acme/d\n  license: mit\n", encoding="utf-8")
    options = ["--out", str(tmp_path / "remote.gguf"), "--manifest", str(manifest)]
    code, _, err = run_cli(*args, "--tokenizer-from", uri, "--endpoint", hub.url, *options)
    assert code == 0, err
    commit = api_for(hub).repo_info(repo + "-target").sha
    [artifact] = load_manifest(manifest).artifacts
    assert artifact.recipe is not None
    assert artifact.recipe.options["tokenizer_from"] == f"hf://{repo}-target@{commit}/{target.name}"
    assert (tmp_path / "remote.gguf").read_bytes() == (tmp_path / "local.gguf").read_bytes()
    shards = len(list((root / "target").glob("*.gguf")))
    assert hub.requests.count("resolve") <= 2 * shards
    assert (
        hub.requests.bytes_out(FILE_ROUTES)
        < sum(p.stat().st_size for p in (root / "target").glob("*.gguf")) / 100
    )
    # The recipe pins each target shard by its header on the Hub at that commit; rebuild reads them again.
    shard_names = sorted(p.name for p in (root / "target").glob("*.gguf"))
    hub_inputs = [i for i in artifact.recipe.inputs if i.uri is not None]
    assert [i.uri for i in hub_inputs] == [f"hf://{repo}-target@{commit}/{n}" for n in shard_names]
    assert all(i.header_sha256 and i.sha256 is None for i in hub_inputs)
    code, out, err = run_cli(
        "rebuild", manifest, "--check", "--json", "--endpoint", hub.url, "--inputs", root
    )
    assert code == 0, err
    assert [r["status"] for r in json.loads(out)["results"]] == ["identical"]
