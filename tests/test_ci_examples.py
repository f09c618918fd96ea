"""The example workflow and pre-commit hooks follow the supply-chain rules the README states."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_release_workflow_pins_actions_and_sources_and_asks_for_least_permissions() -> None:
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    workflow = yaml.safe_load(text)
    uses = re.findall(r"uses:\s*(\S+)", text)
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", u) for u in uses), uses
    assert workflow["permissions"] == {} and workflow["concurrency"]["cancel-in-progress"] is False
    jobs = workflow["jobs"]
    assert jobs["gate"]["permissions"] == {"contents": "read"}
    assert jobs["publish"]["permissions"] == {"contents": "read", "id-token": "write"}
    assert "HF_OIDC_RESOURCE" in jobs["publish"]["env"] and "HF_TOKEN" not in jobs["publish"]["env"]
    installs = [s["run"] for job in jobs.values() for s in job["steps"] if "pip install" in s.get("run", "")]
    assert installs and all(run == 'pip install "$HUBRELEASE_SPEC"' for run in installs)
    assert workflow["env"]["HUBRELEASE_SPEC"] == "."  # this checkout: the exact commit under test
    assert jobs["publish"]["env"]["HUBRELEASE_SPEC"] == ".[sign]"  # the same checkout, with the signing extra
    assert jobs["gate"]["env"]["HUBRELEASE_SPEC"] == ".[bom]"  # the same checkout, with the bom extra
    gate = [s.get("run", "") for s in jobs["gate"]["steps"]]
    verify = gate.index('hubrelease verify "$MANIFEST"')
    assert gate[verify + 2] == 'hubrelease rebuild "$MANIFEST" --check'  # beside verify and the card check
    assert any(run.startswith('hubrelease bom "$MANIFEST"') and run.endswith("--check") for run in gate)


def test_release_workflow_signs_keyless_then_pushes_then_checks_the_signer() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    publish = workflow["jobs"]["publish"]
    assert publish["permissions"]["id-token"] == "write"  # Sigstore's OIDC token as well as the Hub's
    runs = [" ".join(step.get("run", "").split()) for step in publish["steps"]]
    sign = runs.index('hubrelease sign "$MANIFEST" --sigstore')
    push = next(i for i, run in enumerate(runs) if run.startswith('hubrelease push "$MANIFEST" --tag'))
    assert sign < push
    assert runs[-1] == (
        'hubrelease verify "$MANIFEST" --remote --revision "${GITHUB_REF_NAME}" --signature '
        '--identity "https://github.com/${GITHUB_WORKFLOW_REF}" --issuer https://token.actions.githubusercontent.com'
    )


def test_pre_commit_hooks_declare_files_and_a_minimum_version() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert {h["id"] for h in hooks} == {
        "hubrelease-verify",
        "hubrelease-render-card-check",
        "hubrelease-verify-remote",
    }
    for hook in hooks:
        assert hook["pass_filenames"] is False and hook["minimum_pre_commit_version"] == "3.2.0"
        assert "files" in hook or hook.get("always_run") is True
        re.compile(hook.get("files", ""))
