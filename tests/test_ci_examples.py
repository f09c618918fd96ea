"""The example workflow and pre-commit hooks follow the supply-chain rules the README states."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

from hubrelease.loopback import LoopbackHub
from tests.factories.cli import run_program
from tests.factories.hub import api_for, hf_env, unique_repo, upload_files

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
    runs = [s["run"] for job in jobs.values() for s in job["steps"] if "run" in s]
    installs = [run for run in runs if "pip" in run]
    # Every package from the hash-pinned lock (scripts/ci_lock.py), in both jobs; no other install.
    assert (
        installs == ['python -m pip install --require-hashes --only-binary :all: -r "$HUBRELEASE_LOCK"'] * 2
    )
    assert workflow["env"]["HUBRELEASE_LOCK"] == ".github/hubrelease/requirements.txt"
    assert not any(word in run for run in runs for word in ("curl", "wget", "uv ", "pipx"))
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


def test_release_workflow_is_zizmor_clean() -> None:
    zizmor = str(Path(sys.executable).parent / "zizmor")
    workflows = str(ROOT / ".github" / "workflows")
    done = run_program(
        [zizmor, "--offline", "--persona=pedantic", "--no-progress", workflows],
    )
    assert done.returncode == 0 and "No findings to report" in done.stdout, done.stdout + done.stderr


def _earlier_tags_first(
    hub: LoopbackHub, hf_home: Path, repo: str, tag: str, tags: list[str]
) -> tuple[int, str]:
    """The publish job's ordering step, its Python as the workflow holds it, against the loopback Hub."""
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    [run] = [
        s["run"] for s in workflow["jobs"]["publish"]["steps"] if s.get("name", "").startswith("Earlier tags")
    ]
    script = run.split("<<'PY'\n", 1)[1].rsplit("PY\n", 1)[0]
    env = hf_env(hub, hf_home) | {"HF_TOKEN": hub.owner_token}
    done = run_program([sys.executable, "-c", script, repo, tag, *tags], env=env)
    return done.returncode, done.stderr


def test_tag_publishes_have_a_group_each_and_go_out_in_tag_order(hub: LoopbackHub, tmp_path: Path) -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    # One group per tag: a group holds one running and one pending job, and a newer one cancels the
    # pending one, so a group per Hub repo loses all but the last of tags pushed close together.
    group = workflow["jobs"]["publish"]["concurrency"]["group"]
    assert (
        group.endswith("-${{ github.ref }}")
        and workflow["jobs"]["publish"]["concurrency"]["cancel-in-progress"] is False
    )
    steps = [s.get("name", "") for s in workflow["jobs"]["publish"]["steps"]]
    assert steps.index(next(n for n in steps if n.startswith("Earlier tags first"))) < steps.index("Plan")
    repo, tags = unique_repo(), ["v1.0", "v1.1", "v2.0"]
    assert _earlier_tags_first(hub, tmp_path, repo, "v1.1", tags) == (0, "")  # before the first publish
    api = api_for(hub)
    upload_files(api, repo, {"a.txt": b"1\n"})
    api.create_tag(repo, tag="v1.0")
    assert _earlier_tags_first(hub, tmp_path, repo, "v1.1", tags) == (0, "")  # v1.0 out: v1.1's turn
    api.create_tag(repo, tag="v2.0")  # published out of order: v1.1 would roll the Hub back
    code, err = _earlier_tags_first(hub, tmp_path, repo, "v1.1", tags)
    assert code == 1 and "a tag after v1.1 is published; pushing v1.1 would roll the Hub back" in err
