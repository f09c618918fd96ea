"""`hubrelease bom`: a CycloneDX 1.6 ML-BOM that cyclonedx-python-lib's strict validator accepts and
whose digests, pins, figures and recipes are the manifest's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from hubrelease.evaluation.load import load_evaluation
from hubrelease.manifest import load_manifest
from tests.factories.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "manifests" / "example"


def _bom(manifest: Path, *extra: str | Path) -> tuple[str, dict[str, Any]]:
    code, out, err = run_cli("bom", manifest, *extra)
    assert code == 0, err
    return out, json.loads(out)


def _files(component: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["hashes"][0]["content"] for c in component.get("components", []) if c.get("hashes")}


def test_the_example_bom_validates_strictly_and_its_digests_are_the_manifests() -> None:
    text, bom = _bom(EXAMPLE / "hubrelease.yaml")
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    manifest = load_manifest(EXAMPLE / "hubrelease.yaml")
    release = bom["metadata"]["component"]
    assert (release["type"], release["name"]) == ("machine-learning-model", manifest.release.repo_id)
    assert release["licenses"] == [{"license": {"id": "Apache-2.0"}}]
    pinned = {a.path: a.sha256 for a in manifest.artifacts} | {
        e.path: e.sha256 for e in manifest.evaluation_files
    }
    assert _files(release) == pinned  # every published file but the card and the manifest, by the same digest
    engine = next(c for c in bom["components"] if c["type"] == "application")
    assert (engine["name"], engine["version"]) == ("sglang", manifest.pins.engines[0].commit)
    assert [c["type"] for c in bom["components"]] == ["machine-learning-model", "application", "device"]
    # Recipes as formulation: one workflow per build, inputs by the recorded digests, outputs the files.
    [formula] = bom["formulation"]
    assert [w["name"] for w in formula["workflows"]] == [
        "hubrelease build safetensors-drafter",
        "hubrelease build gguf-drafter",
        "hubrelease build eval",
    ]
    inputs = {c["name"]: c for c in formula["components"]}
    recipe = manifest.artifacts[0].recipe
    assert recipe is not None
    for item in recipe.inputs:
        assert inputs[item.name]["hashes"] == [{"alg": "SHA-256", "content": item.sha256}]
    gguf = formula["workflows"][1]
    assert {"resource": {"ref": "file:model.safetensors"}} in gguf[
        "inputs"
    ]  # a published input: the file itself
    assert gguf["outputs"] == [{"type": "artifact", "resource": {"ref": "file:tiny-dflash2-q8_0.gguf"}}]


def test_comparisons_are_metrics_with_their_confidence_intervals() -> None:
    folder = ROOT / "manifests" / "ornith-1.0-dflash-gguf"
    _, bom = _bom(folder / "hubrelease.yaml")
    metrics = bom["metadata"]["component"]["modelCard"]["quantitativeAnalysis"]["performanceMetrics"]
    evaluation = load_evaluation(folder / "evaluation.json")
    row = evaluation.comparisons[0].rows[0]
    [metric] = [
        m
        for m in metrics
        if "paired mean difference" in m["type"] and m["value"] == repr(row.mean_difference)
        and evaluation.comparisons[0].id in m["slice"]
    ]  # fmt: skip
    assert metric["confidenceInterval"] == {
        "lowerBound": repr(row.ci95.low),
        "upperBound": repr(row.ci95.high),
    }


def test_every_builder_recipe_and_the_seeds_validate(built_releases: Path) -> None:
    built = [built_releases / "release" / "hubrelease.yaml", built_releases / "dataset" / "hubrelease.yaml"]
    manifests = [*built, *(ROOT / "manifests").glob("*/hubrelease.yaml")]
    for manifest in manifests:
        text, _ = _bom(manifest)
        assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None, manifest
    header = next(
        c for c in _bom(manifests[0])[1]["formulation"][0]["components"] if c["name"] == "../target.gguf"
    )
    assert "hashes" not in header  # a header digest is not the file's: it is a property
    assert header["properties"][0]["name"] == "hubrelease:header_sha256"


def test_same_manifest_same_bytes_and_add_then_check(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "example")
    manifest = tmp_path / "example" / "hubrelease.yaml"
    out = tmp_path / "example" / "bom.cdx.json"
    first, _ = _bom(manifest)
    assert _bom(manifest)[0] == first
    assert run_cli("bom", manifest, "-o", out, "--add")[0] == 0
    assert out.read_text(encoding="utf-8") == first  # the BOM leaves itself out
    added = load_manifest(manifest).artifact("bom.cdx.json")
    assert added is not None and added.role == "doc"
    assert run_cli("bom", manifest, "-o", out, "--check")[0] == 0
    commit = load_manifest(manifest).pins.engines[0].commit
    text = manifest.read_text(encoding="utf-8").replace(commit, "a" * 40, 1)
    manifest.write_text(text, encoding="utf-8")
    code, _, err = run_cli("bom", manifest, "-o", out, "--check")
    assert code == 1 and "is not the BOM of" in err


@pytest.mark.parametrize("args", [("--add",), ("--check",)])
def test_add_and_check_need_an_output(args: tuple[str, ...]) -> None:
    code, _, err = run_cli("bom", EXAMPLE / "hubrelease.yaml", *args)
    assert code == 2 and "need --out" in err
