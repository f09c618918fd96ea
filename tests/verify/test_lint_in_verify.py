"""verify runs drafter lint for artifacts marked ``lint: true``, once their bytes check out."""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

from hubrelease.manifest import load_manifest
from hubrelease.verify import verify_manifest
from tests.factories.drafters import write_ik_mixed_gguf


def _manifest(root: Path, composition: dict[str, int], lint: bool = True) -> Path:
    gguf = write_ik_mixed_gguf(root / "drafter-q4.gguf")
    data = gguf.read_bytes()
    artifact = {
        "path": gguf.name,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "lint": lint,
        "composition": composition,
    }
    manifest = {"schema_version": 1, "release": {"repo_id": "a/b", "license": "mit"}, "artifacts": [artifact]}
    path = root / "hubrelease.yaml"
    path.write_text(yaml.safe_dump(manifest))
    return path


def test_declared_composition_mismatch_is_a_lint_finding(tmp_path: Path) -> None:
    path = _manifest(tmp_path, {"F32": 1, "Q4_0": 4})
    report = verify_manifest(load_manifest(path), path)
    lint = [f for f in report.findings if f.kind == "lint"]
    assert report.has_drift
    composition = [f.message for f in lint if f.message.startswith("composition: declared ")]
    assert len(composition) == 1, lint
    declared, found = composition[0].split(", file has ")
    assert sorted(declared.removeprefix("composition: declared ").split(", ")) == ["1 F32", "4 Q4_0"]
    assert sorted(found.split(", ")) == ["1 F32", "1 IQ4_KSS", "1 Q8_0", "2 IQ3_KS"]
    assert all(f.path == "drafter-q4.gguf" for f in lint)


def test_matching_composition_raises_no_composition_finding(tmp_path: Path) -> None:
    path = _manifest(tmp_path, {"F32": 1, "Q8_0": 1, "IQ3_KS": 2, "IQ4_KSS": 1})
    report = verify_manifest(load_manifest(path), path)
    assert not [f for f in report.findings if f.message.startswith("composition:")]


def test_lint_is_not_run_unless_asked(tmp_path: Path) -> None:
    path = _manifest(tmp_path, {"Q4_0": 4}, lint=False)
    report = verify_manifest(load_manifest(path), path)
    assert not report.has_drift
