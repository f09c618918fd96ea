"""Licence checks: the release against every source, GGUF general.* and the card."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from hubrelease.hub_licenses import HUB_LICENSES
from hubrelease.lint.licenses import license_class, license_findings
from hubrelease.lint.release import lint_release
from hubrelease.manifest import load_manifest
from hubrelease.manifest.models import Manifest
from tests.factories.cli import run_cli
from tests.factories.drafters import mutate_gguf

REPO = Path(__file__).resolve().parents[2]
SEEDS = [REPO / "manifests" / "ornith-1.5-dflash2", REPO / "manifests" / "ornith-1.0-dflash-gguf"]
COMMIT = "0" * 40


def _manifest(release: str, **pins: list[dict[str, Any]]) -> Manifest:
    base = {"revision": COMMIT}
    other = {"license_name": "x", "license_link": "https://x"} if release == "other" else {}
    data = {
        "schema_version": 1,
        "release": {"repo_id": "acme/drafter", "license": release, **other},
        "pins": {
            kind: [base | {"repo_id": f"acme/{kind}-{i}"} | pin for i, pin in enumerate(items)]
            for kind, items in pins.items()
        },
    }
    return Manifest.model_validate(data)


def _found(manifest: Manifest) -> list[tuple[str, str]]:
    return [(f.severity, f.message) for f in license_findings(manifest)]


def test_the_seeds_licences_pass() -> None:
    # Seed 000: Apache-2.0 drafter from MIT targets, an Apache-2.0 warm start and CC-BY-4.0 data.
    assert _found(load_manifest(SEEDS[0] / "hubrelease.yaml")) == []
    # Seed 001's targets state no licence: nothing to weigh, said as warnings, never an error.
    seed1 = _found(load_manifest(SEEDS[1] / "hubrelease.yaml"))
    assert seed1 and all(severity == "warning" and "states no licence" in m for severity, m in seed1)


PASS: list[tuple[str, dict[str, list[dict[str, Any]]]]] = [
    ("apache-2.0", {"targets": [{"license": "mit"}], "datasets": [{"license": "cc-by-4.0"}]}),
    ("apache-2.0", {"base_drafters": [{"license": "apache-2.0"}], "datasets": [{"license": "odc-by"}]}),
    ("cc-by-nc-4.0", {"datasets": [{"license": "cc-by-nc-4.0"}], "targets": [{"license": "mit"}]}),
    ("cc-by-nc-sa-4.0", {"datasets": [{"license": "cc-by-nc-4.0"}, {"license": "cc-by-nc-sa-3.0"}]}),
    ("cc-by-sa-4.0", {"base_drafters": [{"license": "cc-by-sa-3.0"}]}),
    ("gpl-3.0", {"base_drafters": [{"license": "gpl-2.0"}]}),
    ("llama3.1", {"targets": [{"license": "llama3.1"}]}),
    ("apache-2.0", {"datasets": [{"license": "cc-by-nc-4.0", "role": "evaluation"}]}),
    (
        "apache-2.0",
        {"targets": [{"license": "other", "license_link": "https://x/LICENSE", "license_decision": "ok"}]},
    ),
    (
        "apache-2.0",
        {"targets": [{"license": "gemma", "license_decision": "Gemma terms section 3.1 reviewed"}]},
    ),
]


@pytest.mark.parametrize(("release", "pins"), PASS)
def test_compatible_pairs_pass(release: str, pins: dict[str, list[dict[str, Any]]]) -> None:
    assert [f for f in _found(_manifest(release, **pins)) if f[0] == "error"] == []


FAIL: list[tuple[str, dict[str, list[dict[str, Any]]], str]] = [
    (
        "apache-2.0",
        {"datasets": [{"license": "cc-by-nc-4.0"}]},
        "licence conflict: the release's apache-2.0 vs dataset acme/datasets-0's cc-by-nc-4.0 "
        "(cc-by-nc-4.0 is non-commercial: apache-2.0 permits commercial use)",
    ),
    (
        "cc-by-nc-4.0",
        {"datasets": [{"license": "cc-by-nc-sa-4.0"}]},
        "licence conflict: the release's cc-by-nc-4.0 vs dataset acme/datasets-0's cc-by-nc-sa-4.0 "
        "(cc-by-nc-sa-4.0 is non-commercial: cc-by-nc-4.0 permits commercial use)",
    ),
    (
        "apache-2.0",
        {"base_drafters": [{"license": "cc-by-sa-4.0"}]},
        "licence conflict: the release's apache-2.0 vs base drafter acme/base_drafters-0's cc-by-sa-4.0 "
        "(cc-by-sa-4.0 is share-alike: adapted material must be released under cc-by-sa-4.0)",
    ),
    (
        "mit",
        {"targets": [{"license": "cc-by-nd-4.0"}]},
        "licence conflict: the release's mit vs target acme/targets-0's cc-by-nd-4.0 "
        "(cc-by-nd-4.0 forbids sharing adapted material)",
    ),
    (
        "apache-2.0",
        {"targets": [{"license": "llama3.1"}]},
        "licence conflict: the release's apache-2.0 vs target acme/targets-0's llama3.1 "
        "(llama3.1 carries use restrictions that apache-2.0 does not)",
    ),
    (
        "apache-2.0",
        {"targets": [{"license": "other"}]},
        "target acme/targets-0 is licensed 'other' without a license_link to its terms",
    ),
    (
        "apache-2.0",
        {"targets": [{"license": "other", "license_link": "https://x/LICENSE"}]},
        "target acme/targets-0 is licensed 'other', which the licence table cannot weigh against the "
        "release's apache-2.0: record why the pair is fine in its license_decision",
    ),
]


@pytest.mark.parametrize(("release", "pins", "message"), FAIL)
def test_conflicts_are_errors_naming_both_licences(
    release: str, pins: dict[str, list[dict[str, Any]]], message: str
) -> None:
    assert _found(_manifest(release, **pins)) == [("error", message)]


def test_contested_data_rules_are_warnings() -> None:
    found = _found(_manifest("apache-2.0", datasets=[{"license": "cc-by-sa-4.0"}, {"license": "lgpl-3.0"}]))
    assert [severity for severity, _ in found] == ["warning", "warning"]
    assert "whether trained weights are its adapted material is contested" in found[0][1]
    assert "weak copyleft" in found[1][1]


def test_every_hub_licence_id_has_a_rule_for_every_release_licence() -> None:
    for source in HUB_LICENSES:
        assert license_class(source)
        for release in HUB_LICENSES:
            pins = {"targets": [{"license": source, "license_link": "https://x"}]}
            for finding in license_findings(_manifest(release, **pins)):
                assert finding.rule_id == "license" and finding.message
    assert license_class("not-a-hub-id") == "undecidable"


def test_gguf_general_keys_and_a_hand_written_card_against_the_manifest(tmp_path: Path) -> None:
    release = tmp_path / "example"
    shutil.copytree(REPO / "manifests" / "example", release)
    manifest_path = release / "hubrelease.yaml"
    gguf = release / "tiny-dflash2-q8_0.gguf"
    mutate_gguf(gguf, tmp_path / "m.gguf", set_kv={
        "general.license": "mit", "general.base_model.count": 1,
        "general.base_model.0.repo_url": "https://huggingface.co/z-lab/Qwen3-8B-DFlash-b16"})  # fmt: skip
    shutil.move(tmp_path / "m.gguf", gguf)
    (release / "README.md").write_text("---\nlicense: cc-by-4.0\n---\n# hand-written\n", encoding="utf-8")
    data = yaml.safe_load(manifest_path.read_text())
    data["card"] = {"template": "none"}
    manifest_path.write_text(yaml.safe_dump(data, sort_keys=False))
    found = [
        (r.file, r.finding.rule_id, r.finding.message)
        for r in lint_release(load_manifest(manifest_path), release, None)
    ]
    assert (
        "tiny-dflash2-q8_0.gguf",
        "gguf-general",
        "general.license is 'mit' but the release is licensed 'apache-2.0'",
    ) in found
    assert (
        "tiny-dflash2-q8_0.gguf",
        "gguf-general",
        "general.base_model.0.repo_url names z-lab/Qwen3-8B-DFlash-b16, not a base_model of the release (none)",
    ) in found
    assert (
        "README.md",
        "card-metadata",
        "the card's license is 'cc-by-4.0' but the manifest's is 'apache-2.0'",
    ) in found


def test_lint_manifest_exits_1_on_a_licence_conflict(tmp_path: Path) -> None:
    release = tmp_path / "example"
    shutil.copytree(REPO / "manifests" / "example", release)
    manifest_path = release / "hubrelease.yaml"
    data = yaml.safe_load(manifest_path.read_text())
    data["pins"]["datasets"] = [{"repo_id": "acme/nc-prompts", "revision": COMMIT, "license": "cc-by-nc-4.0"}]
    manifest_path.write_text(yaml.safe_dump(data, sort_keys=False))
    code, out, err = run_cli("lint", manifest_path)
    assert code == 1, err
    assert (
        "error: [license] pins: licence conflict: the release's apache-2.0 vs dataset acme/nc-prompts's cc-by-nc-4.0"
        in out
    )
