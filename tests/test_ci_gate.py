"""`hubrelease check`, the pull-request gate, against the loopback Hub: one test per verdict.

Each scenario is a release repository's pull request: before the first publish, one that changes an
artifact, one that changes nothing, and the four a gate exists to stop (drift, a stale card, a broken
pin, a published file edited on the Hub outside a release).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from hubrelease.ci_gate import GateCheck, GateReport, markdown
from hubrelease_loopback import LoopbackHub, RepoKey
from tests.factories.cli import invoke
from tests.factories.hub import api_for, unique_repo, upload_files
from tests.factories.releases import write_hand_written_release, write_release

WEIGHTS = os.urandom(120_000)
TARGET_CONFIG = b'{"architectures": ["LlamaForCausalLM"]}\n'


def _release(hub: LoopbackHub, folder: Path) -> Path:
    """A release with weights, a config, a pinned target on the Hub and a rendered card."""
    target = unique_repo("target")
    commit = upload_files(api_for(hub), target, {"config.json": TARGET_CONFIG})
    pin = {
        "repo_id": target,
        "revision": commit,
        "files": [
            {
                "path": "config.json",
                "size": len(TARGET_CONFIG),
                "sha256": hashlib.sha256(TARGET_CONFIG).hexdigest(),
            }
        ],
    }
    manifest = write_release(
        folder,
        {"model.safetensors": WEIGHTS, "config.json": b'{"architectures": ["DFlashDraftModel"]}\n'},
        extra_manifest={
            "release": {"repo_id": unique_repo("gate"), "license": "mit"},
            "pins": {"targets": [pin]},
        },
    )
    assert invoke(["render-card", str(manifest)]).exit_code == 0
    return manifest


def _check(hub: LoopbackHub, manifest: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = invoke(["check", str(manifest), "--endpoint", hub.url, "--json", *extra])
    return result.exit_code, json.loads(result.stdout)


def _verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["verdict"] for c in report["checks"]}


def _problems(report: dict[str, Any], name: str) -> list[str]:
    return next(c["problems"] for c in report["checks"] if c["name"] == name)


def _push(hub: LoopbackHub, manifest: Path) -> None:
    result = invoke(["push", str(manifest), "--endpoint", hub.url])
    assert result.exit_code == 0, result.stderr


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    return {f["path"]: f["status"] for f in report["plan"]["files"]}


def _repin(manifest: Path, name: str, data: bytes) -> None:
    """A pull request's change of one artifact: new bytes, re-pinned with `add`, card re-rendered."""
    (manifest.parent / name).write_bytes(data)
    assert invoke(["add", str(manifest), str(manifest.parent / name)]).exit_code == 0
    assert invoke(["render-card", str(manifest)]).exit_code == 0


def test_before_the_first_publish_it_passes_with_a_plan_that_creates_the_repo(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    manifest = _release(hub, tmp_path / "rel")
    verify = invoke(["verify", str(manifest), "--remote", "--endpoint", hub.url])
    assert verify.exit_code == 2  # what the old gate ran: "repository not found"
    summary = tmp_path / "summary.md"
    code, report = _check(hub, manifest, "--summary", str(summary))
    assert (code, report["ok"], report["creates_repo"]) == (0, True, True), report
    assert set(_verdicts(report).values()) == {"pass", "skipped"}
    assert _verdicts(report)["rebuild"] == "skipped"  # no recipes
    verified = next(c["detail"] for c in report["checks"] if c["name"] == "verify")
    assert (
        verified == "4 files (hubrelease.yaml and the 3 it pins) as pinned (size, then sha256)"
    )  # as verify
    assert _statuses(report) == dict.fromkeys(
        ("model.safetensors", "config.json", "README.md", "hubrelease.yaml"), "added"
    )
    text = summary.read_text(encoding="utf-8")
    assert "#### What a push publishes, on a new repo (the push creates it)" in text
    assert "| added | model.safetensors | 117.2 KiB |" in text
    assert not hub.store.exists(RepoKey("model", report["repo_id"]))  # nothing was written


def test_a_pull_request_that_changes_nothing_passes_and_downloads_no_weights(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    manifest = _release(hub, tmp_path / "rel")
    _push(hub, manifest)
    hub.requests.clear()
    code, report = _check(hub, manifest, "--no-preview")
    assert (code, report["creates_repo"]) == (0, False), report
    assert set(_statuses(report).values()) == {"unchanged"} and report["plan"]["deleted"] == []
    assert report["published"]["outside"] == [] and report["published"]["manifest"] == "hubrelease.yaml"
    # Only the published manifest is downloaded; the weights are matched by their LFS sha256.
    assert report["fetched_bytes"] == len(manifest.read_bytes())
    downloaded = [r.path for r in hub.requests.records if r.route in ("resolve", "cdn")]
    assert downloaded and all(p.endswith("/hubrelease.yaml") for p in downloaded), downloaded


def test_a_pull_request_that_changes_an_artifact_passes_and_the_plan_lists_it(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    manifest = _release(hub, tmp_path / "rel")
    _push(hub, manifest)
    _repin(manifest, "model.safetensors", os.urandom(90_000))
    summary = tmp_path / "summary.md"
    code, report = _check(hub, manifest, "--summary", str(summary))
    assert (code, report["ok"]) == (0, True), report
    statuses = _statuses(report)
    assert statuses["model.safetensors"] == "changed" and statuses["config.json"] == "unchanged"
    assert statuses["hubrelease.yaml"] == "changed"
    assert "| changed | model.safetensors | 87.9 KiB |" in summary.read_text(encoding="utf-8")
    # What the old gate ran compares the proposal with the published release: the change is its error.
    assert invoke(["verify", str(manifest), "--remote", "--endpoint", hub.url]).exit_code == 1


def test_drift_between_files_and_manifest_fails_and_names_the_file(hub: LoopbackHub, tmp_path: Path) -> None:
    manifest = _release(hub, tmp_path / "rel")
    _push(hub, manifest)
    (manifest.parent / "config.json").write_bytes(b'{"architectures": ["Other"]}\n')
    code, report = _check(hub, manifest)
    verdicts = _verdicts(report)
    assert (code, verdicts["verify"], verdicts["plan"]) == (1, "fail", "skipped")
    assert [p.split(":")[0] for p in _problems(report, "verify")] == ["config.json"]


def test_a_stale_card_fails(hub: LoopbackHub, tmp_path: Path) -> None:
    manifest = _release(hub, tmp_path / "rel")
    data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    data["release"]["title"] = "A new title the card does not show yet"
    manifest.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    code, report = _check(hub, manifest)
    assert (code, _verdicts(report)["card"], _verdicts(report)["verify"]) == (1, "fail", "pass")
    assert _problems(report, "card") == [
        "README.md: differs from a fresh render; run `hubrelease render-card`"
    ]


def test_a_broken_pin_fails(hub: LoopbackHub, tmp_path: Path) -> None:
    manifest = _release(hub, tmp_path / "rel")
    data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    data["pins"]["targets"][0]["revision"] = "0" * 40
    manifest.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert invoke(["render-card", str(manifest)]).exit_code == 0
    code, report = _check(hub, manifest, "--no-preview")
    assert (code, _verdicts(report)["pins"], _verdicts(report)["plan"]) == (1, "fail", "pass")
    target = data["pins"]["targets"][0]["repo_id"]
    assert [p.split(":")[0] for p in _problems(report, "pins")] == [f"{target}@000000000000"]


def test_a_published_file_edited_on_the_hub_fails_even_beside_a_real_change(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    manifest = _release(hub, tmp_path / "rel")
    _push(hub, manifest)
    repo = yaml.safe_load(manifest.read_text(encoding="utf-8"))["release"]["repo_id"]
    hub.store.replace_file(RepoKey("model", repo), "main", "config.json", b'{"architectures": ["Evil"]}\n')
    code, report = _check(hub, manifest, "--no-preview")
    assert (code, _verdicts(report)["published"]) == (1, "fail")
    assert [p.split(":")[0] for p in _problems(report, "published")] == ["config.json"]
    # The pull request that prepares the next release changes the weights: still refused for the
    # edit it does not make, and the weights are the change it lists.
    _repin(manifest, "model.safetensors", os.urandom(90_000))
    summary = tmp_path / "summary.md"
    code, report = _check(hub, manifest, "--no-preview", "--summary", str(summary))
    assert (code, _verdicts(report)["published"]) == (1, "fail")
    assert [f["path"] for f in report["published"]["outside"]] == ["config.json"]
    assert "| changed (edited on the Hub) | config.json | 40 B |" in summary.read_text(encoding="utf-8")
    assert _statuses(report)["model.safetensors"] == "changed"


def _release_with_a_broken_link(tmp_path: Path) -> Path:
    """A hand-written card linking a file the release does not publish, under a repo of its own."""
    card = "---\nlicense: mit\n---\n# Drafter\n\nSee [the notes](docs/notes.md).\n"
    manifest = write_hand_written_release(tmp_path / "rel", card)
    data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    data["release"]["repo_id"] = unique_repo("links")
    manifest.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return manifest


def test_a_broken_link_on_the_page_fails(hub: LoopbackHub, tmp_path: Path) -> None:
    manifest = _release_with_a_broken_link(tmp_path)
    code, report = _check(hub, manifest)
    assert (code, _verdicts(report)["card"], _verdicts(report)["preview"]) == (1, "pass", "fail")
    assert _problems(report, "preview") == ["link: link docs/notes.md: no file docs/notes.md in the repo"]


@pytest.mark.usefixtures("without_local_hub")
def test_without_the_loopback_hub_the_page_check_is_skipped_and_said(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    """A runner that installed the client alone still gets every other check."""
    manifest = _release_with_a_broken_link(tmp_path)
    code, report = _check(hub, manifest)
    assert (code, _verdicts(report)["card"], _verdicts(report)["preview"]) == (0, "pass", "skipped")
    [preview] = [c for c in report["checks"] if c["name"] == "preview"]
    assert "pip install ./loopback-hub" in preview["detail"]


def test_a_recipe_that_no_longer_rebuilds_its_file_fails(
    hub: LoopbackHub, built_releases: Path, tmp_path: Path
) -> None:
    shutil.copytree(built_releases, tmp_path / "c")
    manifest = tmp_path / "c" / "release" / "hubrelease.yaml"
    text = manifest.read_text(encoding="utf-8")
    at = text.index("out: gguf/drafter-q8_0.gguf")
    manifest.write_text(text[:at] + text[at:].replace("outtype: q8_0", "outtype: f16", 1), encoding="utf-8")
    code, report = _check(hub, manifest, "--no-preview", "--inputs", str(tmp_path / "c"))
    assert (code, _verdicts(report)["rebuild"]) == (1, "fail")
    assert _problems(report, "rebuild") == [
        "gguf/drafter-q8_0.gguf: differs: GGUF key general.file_type: published UINT32 7, rebuilt UINT32 1"
    ]
    # Without --inputs the target beside the release is a path the recipe may not read: a failed check.
    code, report = _check(hub, manifest, "--no-preview")
    assert (code, _verdicts(report)["rebuild"]) == (1, "fail")
    [problem] = _problems(report, "rebuild")
    assert problem.startswith("recipe of gguf/drafter-q8_0.gguf: options.tokenizer_from '../target.gguf'")


def test_the_summary_escapes_table_markup() -> None:
    checks = (GateCheck("verify", "fail", "1 problem(s)", ("a|b_*.md: sha256 mismatch",)),)
    text = markdown(GateReport("acme/x", "main", checks))
    assert "### hubrelease check: acme/x@main FAILED" in text
    assert "| verify | a\\|b\\_\\*.md: sha256 mismatch |" in text.splitlines()
