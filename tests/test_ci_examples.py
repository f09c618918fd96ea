"""The example workflow and pre-commit hooks follow the supply-chain rules the CI gate guide (docs/how-to/ci-gate.md) states."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

from hubrelease.manifest.models import GitHubWorkflow, Signing
from hubrelease.signing.identity import parse_workflow
from hubrelease_loopback import LoopbackHub, RepoKey
from tests.factories.cli import run_program
from tests.factories.hub import api_for, hf_env, unique_repo, upload_files
from tests.factories.releases import write_release

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
    # One command checks what a pull request can get wrong and writes the push plan as the job summary;
    # the gate runs on every event, the nightly schedule included (a Hub edited outside a release).
    assert 'hubrelease check "$MANIFEST" --summary "$GITHUB_STEP_SUMMARY"' in [
        r.split("  #")[0] for r in gate
    ]
    assert any(run.startswith('hubrelease bom "$MANIFEST"') and run.endswith("--check") for run in gate)
    assert "if" not in jobs["gate"] and [c["cron"] for c in workflow[True]["schedule"]] == ["17 4 * * *"]


def test_release_workflow_signs_keyless_then_pushes_then_checks_the_signer() -> None:
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    workflow = yaml.safe_load(text)
    publish = workflow["jobs"]["publish"]
    assert publish["permissions"]["id-token"] == "write"  # Sigstore's OIDC token as well as the Hub's
    runs = [" ".join(step.get("run", "").split()) for step in publish["steps"]]
    sign = runs.index('hubrelease sign "$MANIFEST" --sigstore')
    push = next(i for i, run in enumerate(runs) if run.startswith('hubrelease push "$MANIFEST" --tag'))
    assert sign < push and 'tee "$RUNNER_TEMP/push.json"' in runs[push]
    # The remote verify checks the commit the push reported landing, not a ref that could move.
    assert runs[-1] == (
        'commit="$(jq -er .result.commit "$RUNNER_TEMP/push.json")" hubrelease verify "$MANIFEST" --remote --revision "$commit" '
        '--signature \\ --github-workflow "${GITHUB_WORKFLOW_REF}"'
    )
    # GitHub's GITHUB_WORKFLOW_REF (OWNER/REPO/.github/workflows/release.yml@refs/tags/v1) is the
    # option's own syntax, and the manifest the header shows pins the same workflow.
    assert parse_workflow("acme/models/.github/workflows/release.yml@refs/tags/v1") == GitHubWorkflow(
        repository="acme/models", workflow=".github/workflows/release.yml", ref="refs/tags/v1"
    )
    header = "\n".join(line.removeprefix("#   ") for line in text.splitlines() if line.startswith("#   "))
    signing = Signing.model_validate(yaml.safe_load(header)["signing"])
    assert signing.identity == GitHubWorkflow(
        repository="OWNER/THIS-REPO", workflow=".github/workflows/release.yml", ref="refs/tags/v*"
    )


def test_the_publish_job_verifies_the_commit_its_push_reports(hub: LoopbackHub, tmp_path: Path) -> None:
    """The push step and the commit the verify step reads from its JSON, run as written (the signature
    flags aside: keyless verification needs Sigstore's services)."""
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    runs = [step.get("run", "") for step in workflow["jobs"]["publish"]["steps"]]
    push = next(run for run in runs if run.startswith('hubrelease push "$MANIFEST" --tag'))
    commit_line = runs[-1].splitlines()[0]
    assert commit_line == 'commit="$(jq -er .result.commit "$RUNNER_TEMP/push.json")"'
    repo = unique_repo("tagged")
    checkout = tmp_path / "checkout"
    write_release(checkout, extra_manifest={"release": {"repo_id": repo, "license": "mit"}})
    env = hf_env(hub, tmp_path / "hf") | {
        "MANIFEST": "hubrelease.yaml",
        "GITHUB_REF_NAME": "v1.0",
        "RUNNER_TEMP": str(tmp_path / "runner-temp"),
    }
    (tmp_path / "runner-temp").mkdir()
    script = (
        f'{push}\n{commit_line}\nhubrelease verify "$MANIFEST" --remote --revision "$commit"\necho "$commit"'
    )
    done = run_program(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], env=env, cwd=checkout
    )
    assert done.returncode == 0, done.stdout + done.stderr
    landed = hub.store.resolve(RepoKey("model", repo), "v1.0")
    assert done.stdout.splitlines()[-1] == landed == hub.store.resolve(RepoKey("model", repo), "main")


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
