"""`build speculators-drafter` and the speculators lint rules.

What speculators' own classes make of these files is the conformance tier's job (conformance/run.py,
``speculators`` step: ``SpeculatorModel.from_pretrained`` and ``DFlashConverter`` on the same drafter).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from hubrelease.builders.safetensors_drafter import build_safetensors_drafter
from hubrelease.builders.speculators_drafter import Verifier, build_speculators_drafter
from hubrelease.errors import BuildError, InputError
from hubrelease.lint import lint_file
from tests.factories.cli import run_cli
from tests.factories.drafters import TARGET_LAYERS, write_checkpoint

REPO = Path(__file__).resolve().parents[2]
TARGET_CONFIG = REPO / "manifests" / "example-target" / "config.json"
COMMIT = "4f" * 20
SPEC = f"hubrelease-example/tiny-target@{COMMIT}"


def _verifier(**changes: Any) -> Verifier:
    config = json.loads(TARGET_CONFIG.read_text()) | changes
    return Verifier.from_config(SPEC, config, str(TARGET_CONFIG))


def _config(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "config.json").read_text())
    return data


@pytest.mark.parametrize("dflash2", [False, True])
def test_speculators_config_and_the_same_tensors_as_the_safetensors_build(
    tmp_path: Path, dflash2: bool
) -> None:
    ck = write_checkpoint(tmp_path / "ck", dflash2=dflash2)
    files = build_speculators_drafter(ck, tmp_path / "spec", _verifier())
    assert [f.path.name for f in files] == ["model.safetensors", "config.json"]
    build_safetensors_drafter(ck, tmp_path / "hf")
    assert (tmp_path / "spec" / "model.safetensors").read_bytes() == (
        tmp_path / "hf" / "model.safetensors"
    ).read_bytes()
    config = _config(tmp_path / "spec")
    kind = "dflash2" if dflash2 else "dflash"
    assert config["speculators_model_type"] == kind and config["speculators_version"] == "0.9.0"
    assert config["aux_hidden_state_layer_ids"] == [2, 4, 7]  # z-lab's [1, 3, 6] + 1
    assert config["speculators_config"] == {
        "algorithm": kind,
        "default_proposal_method": "greedy",
        "proposal_methods": [
            {
                "accept_tolerance": 0.0,
                "proposal_type": "greedy",
                "speculative_tokens": 15,
                "verifier_accept_k": 1,
            }
        ],
        "verifier": {"architectures": ["Qwen3ForCausalLM"], "name_or_path": "hubrelease-example/tiny-target"},
    }
    layer = config["transformer_layer_config"]
    assert "dflash_config" not in layer and "block_size" not in layer and layer["hidden_size"] == 64
    assert config["sliding_window_non_causal"] is dflash2
    if dflash2:
        assert (
            config["conv_kernel_size"],
            config["conv_group_size"],
            config["selector_rank"],
            config["selector_top_k"],
        ) == (2, 16, 8, 4)
    assert lint_file(tmp_path / "spec") == []
    # Same input, same bytes.
    again = build_speculators_drafter(ck, tmp_path / "again", _verifier())
    assert [f.sha256 for f in again] == [f.sha256 for f in files]


def test_refused_before_anything_is_written(tmp_path: Path) -> None:
    ck = write_checkpoint(tmp_path / "ck")
    with pytest.raises(BuildError, match="hidden_size 64 != the verifier's 128"):
        build_speculators_drafter(ck, tmp_path / "a", _verifier(hidden_size=128))
    config = _config(ck)
    del config["num_target_layers"]
    config["dflash_config"]["target_layer_ids"] = [1, 3, TARGET_LAYERS - 1]
    (ck / "config.json").write_text(json.dumps(config))
    with pytest.raises(BuildError, match="target layer 7 is not below the last layer 7 of the target"):
        build_speculators_drafter(ck, tmp_path / "b", _verifier())
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    with pytest.raises(InputError, match="--verifier must be ORG/NAME@<40-hex commit>"):
        Verifier.from_config("acme/t@main", {"architectures": ["X"]}, "c.json")


def _mutated(tmp_path: Path, name: str, edit: Any) -> Path:
    folder = tmp_path / name
    shutil.copytree(tmp_path / "spec", folder)
    config = _config(folder)
    edit(config)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_lint_rules_of_the_speculators_fields(tmp_path: Path) -> None:
    build_speculators_drafter(write_checkpoint(tmp_path / "ck"), tmp_path / "spec", _verifier())

    def rules(folder: Path) -> list[tuple[str, str, str]]:
        return [(f.rule_id, f.severity, f.message) for f in lint_file(folder)]

    local = _mutated(
        tmp_path, "local", lambda c: c["speculators_config"]["verifier"].update(name_or_path="/data/target")
    )
    assert rules(local) == [
        (
            "speculators",
            "error",
            "verifier.name_or_path '/data/target' is not a Hub repo id: users cannot fetch it",
        )
    ]
    zero = _mutated(tmp_path, "zero", lambda c: c.update(aux_hidden_state_layer_ids=[0, 2, 5]))
    assert ("target-layers", "error", "aux_hidden_state_layer_ids [0, 2, 5] has 0: speculators ids are z-lab ids + 1 "
            "(0 would be the embeddings)") in rules(zero)  # fmt: skip
    method = _mutated(
        tmp_path, "method", lambda c: c["speculators_config"].update(default_proposal_method="tree")
    )
    assert rules(method) == [
        ("speculators", "error", "default_proposal_method 'tree' is not one of ['greedy']")
    ]
    algo = _mutated(tmp_path, "algo", lambda c: c["speculators_config"].update(algorithm="eagle3"))
    assert rules(algo) == [
        ("speculators", "error", "speculators_config.algorithm is 'eagle3', the model type 'dflash'")
    ]
    tokens = _mutated(
        tmp_path,
        "tokens",
        lambda c: c["speculators_config"]["proposal_methods"][0].update(speculative_tokens=3),
    )
    assert rules(tokens) == [
        ("speculators", "warning", "greedy speculative_tokens is 3; a block of 16 drafts 15")
    ]
    # The draft body's rules apply through the z-lab view: one aux id too many is an fc mismatch.
    four = _mutated(tmp_path, "four", lambda c: c.update(aux_hidden_state_layer_ids=[2, 4, 6, 7]))
    assert [r for r in rules(four) if r[0] == "n-target-features"]


def _release(tmp_path: Path, pinned: str | None) -> Path:
    release = tmp_path / "release"
    shutil.copytree(REPO / "manifests" / "example", release)
    manifest = release / "hubrelease.yaml"
    data = yaml.safe_load(manifest.read_text())
    if pinned:
        data["pins"]["targets"][0] = {
            "repo_id": "hubrelease-example/tiny-target",
            "revision": pinned,
            "license": "apache-2.0",
        }
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))
    return manifest


def test_build_with_manifest_pins_the_verifier_and_the_card_states_it(tmp_path: Path) -> None:
    unpinned = _release(tmp_path / "u", None)
    args: list[str | Path] = [
        "build",
        "speculators-drafter",
        "--verifier",
        SPEC,
        "--verifier-config",
        TARGET_CONFIG,
    ]
    code, _, err = run_cli(
        *args,
        unpinned.parent / "checkpoint",
        "--out",
        unpinned.parent / "speculators",
        "--manifest",
        unpinned,
    )
    assert code == 2
    assert f"the verifier {SPEC} must be pinned in pins.targets at that commit (at main" in err
    assert not (unpinned.parent / "speculators").exists()

    manifest = _release(tmp_path / "p", COMMIT)
    code, _, err = run_cli(
        *args,
        manifest.parent / "checkpoint",
        "--out",
        manifest.parent / "speculators",
        "--manifest",
        manifest,
    )
    assert code == 0, err
    entries = {a["path"]: a for a in yaml.safe_load(manifest.read_text())["artifacts"]}
    weights = entries["speculators/model.safetensors"]
    recipe = weights["recipe"]
    assert (recipe["builder"], recipe["source"], recipe["out"]) == (
        "speculators-drafter",
        "checkpoint",
        "speculators",
    )
    local = os.path.relpath(TARGET_CONFIG, manifest.parent)
    assert recipe["options"] == {"dtype": "bf16", "verifier": SPEC, "verifier_config": local}
    assert {"path": local, "size": TARGET_CONFIG.stat().st_size} == {
        k: v for k, v in recipe["inputs"][-1].items() if k != "sha256"
    }
    assert weights["lint"] is True and weights["lint_config"] == "speculators/config.json"
    assert "speculators/config.json" in entries
    assert run_cli("lint", manifest, "--target", TARGET_CONFIG)[0] == 0
    assert run_cli("render-card", manifest, "--force")[0] == 0
    card = (manifest.parent / "README.md").read_text()
    assert (
        "`speculators/config.json` with `speculators/model.safetensors` is this drafter in the speculators format "
        f"that vLLM serves (`speculators_model_type`, `speculators_config.verifier`), built for the verifier "
        f"`hubrelease-example/tiny-target` at commit `{COMMIT}`."
    ) in card
    code, out, _ = run_cli("verify", manifest)
    assert code == 0, out
    # hubrelease rebuild re-runs the recipe: the same bytes.
    code, out, _ = run_cli("rebuild", manifest, "--json", "--inputs", Path(TARGET_CONFIG).parent)
    rebuilt = {
        r["path"]: r["status"] for r in json.loads(out)["results"] if r["path"].startswith("speculators/")
    }
    assert rebuilt == {
        "speculators/model.safetensors": "identical",
        "speculators/config.json": "identical",
    }, out
    # A verifier that is not the pinned target is a lint error (lint and verify).
    spec_config = manifest.parent / "speculators" / "config.json"
    config = json.loads(spec_config.read_text())
    config["speculators_config"]["verifier"]["name_or_path"] = "acme/other-target"
    spec_config.write_text(json.dumps(config))
    code, out, _ = run_cli("lint", manifest, "--target", TARGET_CONFIG)
    assert code == 1
    assert (
        "error: [speculators] speculators/model.safetensors: the verifier acme/other-target is not in pins.targets"
        in out
    )
