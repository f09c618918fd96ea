"""The example workflow's steps, as written, in a scratch release repository (the CI recipe's test).

    bash scripts/ci_recipe.sh          # a tier of its own: it downloads and installs the whole lock

What GitHub provides is stood in for, nothing else: the scratch git repository is the checkout,
a fresh venv on PATH is setup-python, the loopback Hub is the Hub and GitHub's OIDC issuer (a
trusted publisher configured with the README's claims: repository, workflow, no branch), the
``${{ }}`` expressions get the values GitHub would give. Every ``run:`` step of
``.github/workflows/release.yml`` runs unedited under ``bash -eo pipefail`` (GitHub's shell) with
the workflow's and the job's ``env``; ``uses:`` steps are the stand-ins above; a step's ``if:`` on
the event is honoured. The lock is made by the README's command (``scripts/ci_lock.py``).
Order: the tag push (gate, then publish), then a pull request's gate (its plan is against the
release just published; each run's job summary is checked). Exits non-zero on the first step that fails, naming it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path
from typing import Any

import yaml

from hubrelease.loopback import LoopbackHub, RepoKey
from hubrelease.loopback.oidc import Publisher

CHECKOUT = Path(__file__).resolve().parents[1]
WORKFLOW = CHECKOUT / ".github" / "workflows" / "release.yml"
GITHUB_REPO = "acme/drafter-release"
TAG = "v1.0"
SIGSTORE_FLAGS = ("--sigstore", "--signature")


def sh(*command: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    subprocess.run(command, cwd=cwd, env=env, check=True)


def scratch_repository(root: Path, hub_repo: str) -> None:
    """A release repository as a user keeps it: manifest, files, published BOM, rendered card, tag v1.0."""
    release = root / "release"
    release.mkdir(parents=True)
    files = {"model.safetensors": os.urandom(300_000), "config.json": b'{"architectures": ["X"]}\n'}
    artifacts = []
    for name, data in files.items():
        (release / name).write_bytes(data)
        artifacts.append({"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    manifest = {
        "schema_version": 1,
        "release": {"repo_id": hub_repo, "license": "mit"},
        "artifacts": artifacts,
    }
    (release / "hubrelease.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    hubrelease = str(Path(sys.executable).parent / "hubrelease")
    sh(hubrelease, "bom", "release/hubrelease.yaml", "-o", "release/bom.cdx.json", "--add", cwd=root)
    sh(hubrelease, "render-card", "release/hubrelease.yaml", cwd=root)
    (root / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(WORKFLOW, root / ".github" / "workflows" / "release.yml")
    sh(
        sys.executable, str(CHECKOUT / "scripts" / "ci_lock.py"), str(root), cwd=CHECKOUT
    )  # the README's command
    sh("git", "init", "-q", cwd=root)
    sh("git", "add", "-A", cwd=root)
    sh(
        "git",
        "-c",
        "user.name=ci",
        "-c",
        "user.email=ci@example.invalid",
        "commit",
        "-qm",
        "release",
        cwd=root,
    )
    sh("git", "tag", TAG, cwd=root)


def expand(value: str, context: dict[str, str]) -> str:
    """``${{ a.b }}`` -> the value GitHub would give (unknown ones, e.g. secrets, are empty)."""
    return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: context.get(m.group(1), ""), value)


def run_job(job: dict[str, Any], name: str, base: dict[str, str], context: dict[str, str], cwd: Path) -> None:
    env = dict(base)
    for scope in (WORKFLOW_DOC["env"], job.get("env", {})):
        env.update({key: expand(str(value), context) for key, value in scope.items()})
    for step in job["steps"]:
        label = step.get("name") or step.get("run") or step.get("uses")
        condition = step.get("if")
        if condition is not None and not evaluate(condition, context):
            print(f"[ci-recipe] {name}: skipped (if: {condition}): {label}")
            continue
        if any(flag in step.get("run", "") for flag in SIGSTORE_FLAGS):
            print(f"[ci-recipe] {name}: NOT RUN (needs Sigstore's Fulcio and Rekor): {label}")
            continue
        if "uses" in step:
            print(f"[ci-recipe] {name}: stood in for: {step['uses'].split('@')[0]}")
            continue
        print(f"[ci-recipe] {name}: run: {label}", flush=True)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd, env=env
        )
        if done.returncode != 0:
            raise SystemExit(f"[ci-recipe] {name}: step failed with exit {done.returncode}: {label}")


def evaluate(condition: str, context: dict[str, str]) -> bool:
    """The conditions the example uses: ``github.event_name == '...'``, ``always() && ...``, startsWith."""
    text = condition.replace("always() &&", "").strip()
    found = re.fullmatch(r"github\.event_name == '(\w+)'", text)
    if found:
        return context["github.event_name"] == found.group(1)
    found = re.fullmatch(r"startsWith\(github\.ref, '([^']+)'\)", text)
    if found:
        return context["github.ref"].startswith(found.group(1))
    raise SystemExit(f"[ci-recipe] unknown condition {condition!r}: teach evaluate() about it")


WORKFLOW_DOC: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def main() -> None:
    jobs = WORKFLOW_DOC["jobs"]
    with (
        tempfile.TemporaryDirectory(prefix="ci-recipe-") as tmp,
        LoopbackHub(Path(tmp) / "hub", allow_anonymous=True) as hub,
    ):
        root, hub_repo = Path(tmp) / "repo", "acme/drafter"
        scratch_repository(root, hub_repo)
        runner = Path(tmp) / "runner"
        venv.create(runner, with_pip=True)  # setup-python: a clean interpreter, nothing installed
        base = {
            "PATH": f"{runner / 'bin'}{os.pathsep}/usr/bin:/bin",
            "HOME": str(Path(tmp) / "home"),
            "HF_ENDPOINT": hub.url,
            "GITHUB_ACTIONS": "true",
            "GITHUB_REF_NAME": TAG,
            "GITHUB_REPOSITORY": GITHUB_REPO,
            "GITHUB_STEP_SUMMARY": str(Path(tmp) / "step-summary.md"),
            "RUNNER_TEMP": tmp,
            **{key: value for key, value in os.environ.items() if key.startswith(("PIP_", "SSL_"))},
        }
        tag_run = {"github.event_name": "push", "github.ref": f"refs/tags/{TAG}", "vars.HF_REPO_ID": hub_repo}
        claims = {
            "repository": GITHUB_REPO,
            "ref": f"refs/tags/{TAG}",
            "workflow_ref": f"{GITHUB_REPO}/.github/workflows/release.yml@refs/tags/{TAG}",
        }
        hub.oidc.trust(hub_repo, Publisher(GITHUB_REPO, workflow="release.yml"))  # the README's claims
        run_job(jobs["gate"], "gate (tag)", base, tag_run, root)
        run_job(jobs["publish"], "publish (tag)", base | hub.oidc.ci_job(claims, hub.url), tag_run, root)
        exchanges = [r.status for r in hub.requests.records if r.route == "oauth_token"]
        assert exchanges and set(exchanges) == {200}, exchanges  # the push used the exchanged token
        key = RepoKey("model", hub_repo)
        tagged = hub.store.resolve(key, TAG)
        assert tagged == hub.store.resolve(key, "main") and len(hub.store.history(key, "main")) == 2
        pr_run = {
            "github.event_name": "pull_request",
            "github.ref": "refs/pull/1/merge",
            "vars.HF_REPO_ID": hub_repo,
        }
        run_job(jobs["gate"], "gate (pull request)", base, pr_run, root)
        summary = Path(base["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
        assert f"hubrelease check: {hub_repo}@main passed" in summary, summary
        print(
            f"[ci-recipe] OK: every step run passed (the Sigstore steps were not run); {hub_repo}@{TAG} is "
            f"{tagged[:12]}, pushed with the token the OIDC exchange gave"
        )


if __name__ == "__main__":
    main()
