"""What `build ... --manifest` records as a recipe, and where `build eval --manifest` may write."""

from __future__ import annotations

from pathlib import Path

from hubrelease.manifest import load_manifest
from tests.factories.bench_runs import sglang_line, write_jsonl
from tests.factories.cli import run_cli

MANIFEST = """\
schema_version: 1
release: {repo_id: acme/x, license: mit}
evaluations:
  - path: evaluation.json
    deviations:
      - {field: hardware, note: measured on the lab machine}
"""


def _eval(tmp_path: Path, *extra: str) -> tuple[int, str]:
    write_jsonl(tmp_path / "ar.jsonl", [sglang_line(max_concurrency=1)])
    code, _, err = run_cli(
        "build",
        "eval",
        tmp_path / "ar.jsonl",
        "--hardware",
        "Test GPU",
        "--target",
        "acme/t",
        "--out",
        tmp_path / "evaluation.json",
        *extra,
    )
    return code, err


def test_manifest_records_and_check_digests_only_checks(tmp_path: Path) -> None:
    manifest = tmp_path / "hubrelease.yaml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    code, err = _eval(tmp_path, "--check-digests", str(manifest))
    assert code == 0, err
    assert (tmp_path / "evaluation.json").is_file()
    assert manifest.read_text(encoding="utf-8") == MANIFEST


def test_manifest_and_check_digests_together_are_refused(tmp_path: Path) -> None:
    manifest = tmp_path / "hubrelease.yaml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    code, err = _eval(tmp_path, "--manifest", str(manifest), "--check-digests", str(manifest))
    assert code == 2 and "error: --manifest already checks the sha columns" in err
    assert not (tmp_path / "evaluation.json").exists()


def test_record_pins_the_file_with_its_recipe_and_keeps_stated_deviations(tmp_path: Path) -> None:
    manifest = tmp_path / "hubrelease.yaml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    code, err = _eval(tmp_path, "--manifest", str(manifest))
    assert code == 0, err
    [entry] = load_manifest(manifest).evaluation_files
    assert entry.size == (tmp_path / "evaluation.json").stat().st_size
    assert [d.field for d in entry.deviations] == ["hardware"]
    assert entry.recipe is not None and entry.recipe.builder == "eval"
    assert entry.recipe.options == {"sources": ["ar.jsonl"], "hardware": "Test GPU", "target": "acme/t"}
    assert [i.path for i in entry.recipe.inputs] == ["ar.jsonl"]


def test_record_refuses_an_output_outside_the_release_folder(tmp_path: Path) -> None:
    (tmp_path / "rel").mkdir()
    manifest = tmp_path / "rel" / "hubrelease.yaml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    code, err = _eval(tmp_path, "--manifest", str(manifest))
    assert code == 2 and "is outside the release folder" in err
    assert not (tmp_path / "evaluation.json").exists()  # refused before anything was read


def test_init_and_add_leave_files_recipe_less(tmp_path: Path) -> None:
    (tmp_path / "rel").mkdir()
    (tmp_path / "rel" / "model.gguf").write_bytes(b"GGUF" + bytes(60))
    code, _, err = run_cli("init", tmp_path / "rel", "--repo-id", "acme/x", "--license", "mit")
    assert code == 0, err
    assert all(a.recipe is None for a in load_manifest(tmp_path / "rel" / "hubrelease.yaml").artifacts)
