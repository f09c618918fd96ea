"""Exit-3 findings of a hostile-input campaign in onboarding and paths: each is now one line (or a warning), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubrelease.fsutil import atomic_write_text, staging_dir
from hubrelease.manifest import load_manifest
from hubrelease.onboarding.init import InitOptions, init_manifest
from hubrelease.verify import verify_manifest
from tests.factories.cli import invoke


def test_reversed_range_in_gitignore_is_dropped_as_git_does(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / ".gitignore").write_text("[z-a]\n*.log\n")
    (tmp_path / "x.log").write_text("log\n")
    init_manifest(InitOptions(root=tmp_path, out=tmp_path / "hubrelease.yaml", repo_id="acme/x"))
    manifest = load_manifest(tmp_path / "hubrelease.yaml")
    assert [a.path for a in manifest.artifacts] == ["a.txt"]
    assert "x.log" in manifest.ignore


def test_reversed_range_in_exclude_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    result = invoke(["init", str(tmp_path), "--exclude", "[z-a]"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: exclude: '[z-a]' is not a valid gitignore pattern"


@pytest.mark.parametrize(
    "front", ["tags: 5", "license: [1, 2]\ntags: {a: 1}", "base_model: {a: 1}", "eval_results: 5"]
)
def test_wrongly_typed_front_matter_is_a_warning_not_an_internal_error(tmp_path: Path, front: str) -> None:
    (tmp_path / "README.md").write_text(f"---\n{front}\n---\n# hi\n")
    (tmp_path / "w.safetensors").write_bytes(b"x")
    result = invoke(["init", str(tmp_path), "--repo-id", "acme/x"])
    assert result.exit_code == 0, result.stderr
    assert "internal error" not in result.stderr


@pytest.mark.parametrize("path", ['"a\\0b"', '"a\\ud800b"', '"dir/\\x07bell"'])
@pytest.mark.parametrize("section", ["artifacts", "evaluations"])
def test_nul_control_and_lone_surrogate_paths_are_one_line_exit_2(
    tmp_path: Path, path: str, section: str
) -> None:
    entry = f"  - path: {path}\n" if section == "artifacts" else f"  - {path}\n"
    manifest = tmp_path / "hubrelease.yaml"
    manifest.write_text(f"schema_version: 1\nrelease: {{repo_id: acme/x, license: mit}}\n{section}:\n{entry}")
    for command in (["verify"], ["render-card"], ["checksums"], ["push", "--dry-run"]):
        result = invoke([*command, str(manifest)])
        assert result.exit_code == 2, (command, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "control character or a lone surrogate" in lines[0], lines


def test_leftovers_of_killed_writes_are_not_data(tmp_path: Path) -> None:
    (tmp_path / "model.gguf").write_bytes(b"GGUF")
    atomic_write_text(tmp_path / "notes.md", "notes\n")
    leftover = tmp_path / ".hubrelease-tmp-README.md.abc123.tmp"  # what a killed atomic write leaves
    leftover.write_text("half")
    staging = staging_dir(tmp_path / "d.gguf")  # what a killed gguf build leaves
    (staging / "d.gguf").write_bytes(b"half")
    assert staging.name.startswith(".hubrelease-tmp-d.gguf.")
    out = tmp_path / "hubrelease.yaml"
    init_manifest(InitOptions(root=tmp_path, out=out, repo_id="acme/x"))
    manifest = load_manifest(out)
    assert sorted(a.path for a in manifest.artifacts) == ["model.gguf", "notes.md"]
    assert manifest.ignore == []
    report = verify_manifest(manifest, out)
    assert {(f.kind, f.severity) for f in report.findings} == {("temp_leftover", "info")}
    assert sorted(f.path for f in report.findings) == [leftover.name, staging.name]
    assert not report.has_drift
    result = invoke(["add", str(out), str(leftover)])
    assert result.exit_code == 2
    assert "temp file of an interrupted write" in result.stderr
