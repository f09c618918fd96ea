"""`lint MANIFEST` and verify use the pinned target's facts, read from the Hub once and remembered by pin."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

from hubrelease.builders.safetensors_drafter import build_safetensors_drafter
from hubrelease.lint.target import TARGETS_CACHE
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import run_cli
from tests.factories.drafters import TARGET_LAYERS, write_checkpoint
from tests.factories.hub import api_for, unique_repo, upload_release
from tests.factories.releases import write_release
from tests.factories.targets import write_target_model

LAST = TARGET_LAYERS - 1


def _last_layer_release(root: Path, target: str, commit: str) -> Path:
    """A safetensors drafter reading the target's last layer, its config silent on the target's depth."""
    ck = write_checkpoint(root / "ck")
    config = json.loads((ck / "config.json").read_text())
    del config["num_target_layers"]
    config["dflash_config"]["target_layer_ids"] = [1, 3, LAST]
    (ck / "config.json").write_text(json.dumps(config))
    build_safetensors_drafter(ck, root / "rel")
    files = {p.name: p.read_bytes() for p in sorted((root / "rel").iterdir())}
    pins = {"targets": [{"repo_id": target, "revision": commit, "license": "apache-2.0"}]}
    manifest = write_release(root / "rel", files, extra_manifest={"pins": pins})
    data = yaml.safe_load(manifest.read_text())
    for artifact in data["artifacts"]:
        if artifact["path"] == "model.safetensors":
            artifact.update(lint=True, lint_config="config.json")
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))
    return manifest


def _target(hub: LoopbackHub, root: Path) -> tuple[str, str]:
    folder = write_target_model(root / "target")
    repo = unique_repo("target")
    manifest = write_release(folder, {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()})
    return repo, upload_release(api_for(hub), repo, folder, manifest)


def test_pinned_target_flags_the_last_layer_locally_after_one_read(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, commit = _target(hub, tmp_path)
    manifest = _last_layer_release(tmp_path, repo, commit)
    code, out, err = run_cli("lint", manifest, "--endpoint", hub.url)
    assert code == 1, err
    source = f"hf://{repo}@{commit}/config.json"
    expected = (
        f"error: [target-layers] model.safetensors: target layer {LAST} is not below the last layer {LAST} of "
        f"the target ({source}): the engines capture layer inputs, the last layer has no successor"
    )
    assert expected in out
    remembered = json.loads((manifest.parent / TARGETS_CACHE).read_text())
    assert remembered == {
        f"model:{repo}@{commit}/config.json": {
            "depth": TARGET_LAYERS,
            "hidden": 64,
            "vocab": 512,
            "source": source,
        }
    }
    # A local verify reads no Hub: the remembered facts make the same finding.
    hub.requests.clear()
    code, out, _ = run_cli("verify", manifest)
    assert code == 1
    assert f"model.safetensors  target-layers: target layer {LAST} is not below" in out
    assert hub.requests.count("resolve") == 0
    # --json of lint names the file of each finding.
    code, out, _ = run_cli("lint", manifest, "--endpoint", hub.url, "--json")
    finding = next(f for f in json.loads(out)["findings"] if f["rule_id"] == "target-layers")
    assert finding["file"] == "model.safetensors" and finding["severity"] == "error"


def test_cached_facts_are_used_only_for_their_pin(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, commit = _target(hub, tmp_path)
    manifest = _last_layer_release(tmp_path, repo, commit)
    cache = manifest.parent / TARGETS_CACHE
    cache.parent.mkdir(exist_ok=True)
    # Facts remembered for another commit say nothing about this pin.
    cache.write_text(
        json.dumps({f"model:{repo}@{'0' * 40}/config.json": {"depth": 99, "hidden": 64, "source": "x"}})
    )
    code, out, _ = run_cli("verify", manifest)
    assert code == 0, out
    # lock reads the pinned target and remembers it for the pin.
    code, _, err = run_cli("lock", manifest, "--endpoint", hub.url)
    assert code == 0, err
    assert f"model:{repo}@{commit}/config.json" in json.loads(cache.read_text())
    assert run_cli("verify", manifest)[0] == 1


def test_target_option_overrides_and_reads_hf_locations(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, commit = _target(hub, tmp_path)
    manifest = _last_layer_release(tmp_path, repo, commit)
    drafter = manifest.parent / "model.safetensors"
    assert run_cli("lint", drafter)[0] == 0  # nothing to go on
    code, out, _ = run_cli(
        "lint", drafter, "--target", f"hf://{repo}@{commit}/config.json", "--endpoint", hub.url
    )
    assert code == 1 and "[target-layers] target layer 7 is not below the last layer 7" in out
    code, out, _ = run_cli("lint", drafter, "--target", tmp_path / "target")
    assert code == 1 and f"of the target ({tmp_path / 'target' / 'config.json'})" in out
    assert run_cli("lint", drafter, "--target", tmp_path / "nope.txt")[0] == 2
    digest = hashlib.sha256(drafter.read_bytes()).hexdigest()
    assert digest  # the drafter is untouched by lint
