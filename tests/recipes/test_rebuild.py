"""`hubrelease rebuild`: every builder's recipe re-runs to the same bytes, and each kind of drift is
reported on the right file with its cause (input, option, library version, figure)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import save_file

from hubrelease.formats.safetensors_header import load_safetensors_header
from hubrelease.manifest import load_manifest
from tests.factories.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
BUILT = [
    ("model.safetensors", "safetensors-drafter"),
    ("config.json", "safetensors-drafter"),
    ("gguf/drafter-q8_0.gguf", "gguf-drafter"),
    ("split/drafter-f16-00001-of-00003.gguf", "gguf-drafter"),
    ("split/drafter-f16-00002-of-00003.gguf", "gguf-drafter"),
    ("split/drafter-f16-00003-of-00003.gguf", "gguf-drafter"),
    ("gguf/ik-f16.gguf", "gguf-drafter"),
    ("serving-evaluation.json", "eval"),
    ("ab-evaluation.json", "eval"),
]


@pytest.fixture
def built(built_releases: Path) -> Path:
    return built_releases


@pytest.fixture
def copy(built: Path, tmp_path: Path) -> Path:
    """A copy to change (the recipes' paths are relative, so they hold in the copy)."""
    shutil.copytree(built, tmp_path / "c")
    return tmp_path / "c"


def _rebuild(manifest: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    """``rebuild --check --json``, reading the target GGUF beside the release (``--inputs``)."""
    code, out, err = run_cli(
        "rebuild", manifest, "--check", "--json", "--inputs", manifest.parent.parent, *extra
    )
    assert code in (0, 1, 2), err
    return code, json.loads(out)


def _by_path(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["path"]: r for r in report["results"]}


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")
    }


def test_every_builder_rebuilds_identical_and_the_release_is_untouched(built: Path) -> None:
    before = _tree(built)
    code, report = _rebuild(built / "release" / "hubrelease.yaml", "-j", "2")
    assert code == 0, report
    assert [(r["path"], r["builder"], r["status"]) for r in report["results"]] == [
        (path, builder, "identical") for path, builder in BUILT
    ]
    figures = {r["path"]: r["figures"] for r in report["results"] if r["kind"] == "evaluation"}
    assert all(f["compared"] == f["matched"] > 20 and f["differing"] == [] for f in figures.values())
    code, report = _rebuild(built / "dataset" / "hubrelease.yaml")
    assert code == 0
    assert [(r["path"], r["kind"], r["status"]) for r in report["results"]] == [
        ("README.md", "card", "identical")
    ]
    assert _tree(built) == before  # nothing written in the release folders


def test_recipes_record_inputs_by_digest_and_tool_versions(built: Path) -> None:
    manifest = load_manifest(built / "release" / "hubrelease.yaml")
    gguf = manifest.artifact("gguf/drafter-q8_0.gguf")
    assert gguf is not None and gguf.recipe is not None
    recipe = gguf.recipe
    assert recipe.out == "gguf/drafter-q8_0.gguf"
    assert [i.path for i in recipe.inputs] == ["config.json", "model.safetensors", "../target.gguf"]
    data = (built / "release" / "model.safetensors").read_bytes()
    assert recipe.inputs[1].sha256 == hashlib.sha256(data).hexdigest()
    assert recipe.inputs[2].sha256 is None and recipe.inputs[2].header_sha256 is not None  # header only
    assert set(recipe.tools) == {"hubrelease", "gguf", "numpy"}
    [serving] = [e for e in manifest.evaluation_files if e.path == "serving-evaluation.json"]
    assert serving.recipe is not None
    assert serving.recipe.options["configurations"] == ["autoregressive", ""]
    assert [i.path for i in serving.recipe.inputs] == [
        "bench/ar.jsonl",
        "bench/df.jsonl",
        "bench/serving-spec.json",
    ]
    assert set(serving.recipe.tools) == {"hubrelease", "pydantic"}
    card = load_manifest(built / "dataset" / "hubrelease.yaml").card
    assert card is not None and card.recipe is not None
    assert "tokenizers" in card.recipe.tools


def test_a_one_byte_change_to_a_source_names_the_input_and_its_digests(copy: Path) -> None:
    source = copy / "release" / "bench" / "df.jsonl"
    recorded = hashlib.sha256(source.read_bytes()).hexdigest()
    source.write_bytes(source.read_bytes().replace(b'"duration": 10.0', b'"duration": 11.0', 1))
    code, report = _rebuild(copy / "release" / "hubrelease.yaml")
    assert code == 1
    statuses = {path: r["status"] for path, r in _by_path(report).items()}
    assert statuses == {path: "identical" for path, _ in BUILT} | {"serving-evaluation.json": "input-changed"}
    result = _by_path(report)["serving-evaluation.json"]
    now = hashlib.sha256(source.read_bytes()).hexdigest()
    assert result["inputs"] == [
        {"input": "bench/df.jsonl", "problem": "changed", "recorded": f"sha256 {recorded}", "now": f"sha256 {now}",
         "detail": None}
    ]  # fmt: skip
    # Figure by figure: the dflash2 cells' throughputs moved, the autoregressive ones did not.
    differing = [d["path"] for d in result["figures"]["differing"]]
    assert differing and all(p.startswith(("cells[2]", "cells[3]", "provenance")) for p in differing)
    assert result["detail"].startswith("JSON ")


def test_a_changed_checkpoint_tensor_is_reported_on_the_files_built_from_it(copy: Path) -> None:
    ck = copy / "release" / "checkpoint" / "checkpoint-0.safetensors"
    tensor = next(t for t in load_safetensors_header(ck).tensors if "rotary" not in t.name)
    data = bytearray(ck.read_bytes())
    data[tensor.start + 3] ^= 0x80  # the sign of its first float32: bf16 keeps it
    ck.write_bytes(bytes(data))
    code, report = _rebuild(copy / "release" / "hubrelease.yaml")
    assert code == 1
    results = _by_path(report)
    assert results["model.safetensors"]["status"] == "input-changed"
    assert results["model.safetensors"]["inputs"][0]["input"] == "checkpoint/checkpoint-0.safetensors"
    name = tensor.name.removeprefix("model.")
    assert results["model.safetensors"]["detail"] == f"safetensors tensor {name}: data differs"
    # The GGUFs read the published model.safetensors, which did not change: their recipes still hold.
    assert results["gguf/drafter-q8_0.gguf"]["status"] == "identical"


def test_a_changed_option_names_the_first_differing_gguf_key(copy: Path) -> None:
    manifest = copy / "release" / "hubrelease.yaml"
    text = manifest.read_text(encoding="utf-8")
    at = text.index("out: gguf/drafter-q8_0.gguf")
    manifest.write_text(text[:at] + text[at:].replace("outtype: q8_0", "outtype: f16", 1), encoding="utf-8")
    code, report = _rebuild(manifest)
    assert code == 1
    result = _by_path(report)["gguf/drafter-q8_0.gguf"]
    assert (result["status"], result["detail"]) == (
        "differs",
        "GGUF key general.file_type: published UINT32 7, rebuilt UINT32 1",
    )
    assert [r["path"] for r in report["results"] if r["status"] != "identical"] == ["gguf/drafter-q8_0.gguf"]


def test_a_different_library_version_recorded(copy: Path) -> None:
    manifest = copy / "release" / "hubrelease.yaml"
    text = manifest.read_text(encoding="utf-8")
    head, tail = text.split("out: gguf/ik-f16.gguf", 1)
    recorded = load_manifest(manifest).artifact("gguf/ik-f16.gguf")
    assert recorded is not None and recorded.recipe is not None
    here = recorded.recipe.tools["gguf"]
    manifest.write_text(
        head + "out: gguf/ik-f16.gguf" + tail.replace(f"gguf: {here}", "gguf: 0.0.1", 1), encoding="utf-8"
    )
    code, report = _rebuild(manifest)
    # Same bytes under another gguf: identical, with the version difference stated.
    result = _by_path(report)["gguf/ik-f16.gguf"]
    assert (code, result["status"]) == (0, "identical")
    assert result["tools"] == [{"name": "gguf", "recorded": "0.0.1", "here": here}]
    # Bytes that differ under another recorded version: the version is the cause.
    text = manifest.read_text(encoding="utf-8")
    assert recorded.sha256 is not None
    manifest.write_text(text.replace(recorded.sha256, "a" * 64, 1), encoding="utf-8")
    code, report = _rebuild(manifest)
    result = _by_path(report)["gguf/ik-f16.gguf"]
    assert (code, result["status"]) == (1, "tool-differs")
    code, out, _ = run_cli("rebuild", manifest, "--check", "--inputs", copy)
    assert code == 1
    line = next(line for line in out.splitlines() if "ik-f16" in line)
    assert line.split()[0] == "tool-differs" and f"gguf 0.0.1 recorded, {here} here" in line


def test_a_missing_input_is_exit_2_and_names_it(copy: Path) -> None:
    (copy / "target.gguf").unlink()
    code, report = _rebuild(copy / "release" / "hubrelease.yaml")
    assert code == 2
    missing = {r["path"] for r in report["results"] if r["status"] == "input-missing"}
    assert missing == {p for p, b in BUILT if b == "gguf-drafter"}
    result = _by_path(report)["gguf/drafter-q8_0.gguf"]
    assert [(i["input"], i["problem"]) for i in result["inputs"]] == [("../target.gguf", "missing")]
    assert report["summary"]["identical"] == 4


def test_a_shard_added_to_a_source_folder_is_an_input_change(copy: Path) -> None:
    extra = copy / "release" / "checkpoint" / "extra.safetensors"
    save_file({"extra.weight": np.zeros(4, dtype=np.float32)}, str(extra))
    code, report = _rebuild(copy / "release" / "hubrelease.yaml")
    assert code == 1
    result = _by_path(report)["model.safetensors"]
    assert result["status"] == "input-changed"
    assert [(i["input"], i["problem"]) for i in result["inputs"]] == [("checkpoint/extra.safetensors", "new")]
    assert result["detail"].startswith("the recipe failed: ")  # the builder refuses the unexpected tensor


def test_report_is_the_same_for_any_jobs(copy: Path) -> None:
    (copy / "release" / "bench" / "ab.csv").write_text("broken\n", encoding="utf-8")
    outputs = {
        run_cli("rebuild", copy / "release" / "hubrelease.yaml", "--json", "-j", str(j), "--inputs", copy)[1]
        for j in (1, 3)
    }
    assert len(outputs) == 1
    assert json.loads(outputs.pop())["summary"]["input-changed"] == 1


def test_without_check_the_report_exits_0(copy: Path) -> None:
    (copy / "release" / "config.json").write_text("{}\n", encoding="utf-8")
    code, out, _ = run_cli("rebuild", copy / "release" / "hubrelease.yaml", "--inputs", copy)
    assert code == 0
    line = next(line for line in out.splitlines() if line.split()[1] == "gguf/drafter-q8_0.gguf")
    assert line.startswith("input-changed") and "input config.json changed: recorded sha256 " in line
    assert run_cli("rebuild", copy / "release" / "hubrelease.yaml", "--check", "--inputs", copy)[0] == 1


def test_an_old_recipe_without_inputs_still_loads_and_rebuilds(copy: Path) -> None:
    manifest = copy / "release" / "hubrelease.yaml"
    data = load_manifest(manifest).model_dump(mode="json", exclude_defaults=True)
    for artifact in data["artifacts"]:
        for key in ("inputs", "tools", "out"):
            artifact["recipe"].pop(key)
    data["evaluations"] = []
    manifest.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML
    code, report = _rebuild(manifest)
    assert code == 0
    assert {r["status"] for r in report["results"]} == {"identical"}
    assert report["results"][0]["notes"] == ["the recipe records no inputs (an older build): not compared"]


def test_the_example_rebuilds_identical() -> None:
    code, report = _rebuild(ROOT / "manifests" / "example" / "hubrelease.yaml")
    assert code == 0, report
    assert [(r["path"], r["status"]) for r in report["results"]] == [
        ("model.safetensors", "identical"),
        ("config.json", "identical"),
        ("tiny-dflash2-q8_0.gguf", "identical"),
        ("evaluation.json", "identical"),
    ]
