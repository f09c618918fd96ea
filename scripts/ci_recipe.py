"""The CI rehearsal: the example workflow's jobs, each in a fresh venv from the lock, through a release's life.

    bash scripts/ci_recipe.sh          # a tier of its own: every job installs the whole lock

What GitHub provides is stood in for, nothing else: a clone of the scratch release repository at
the job's commit is actions/checkout, a fresh venv is setup-python, ``hubrelease hub serve`` is
the Hub and GitHub's OIDC issuer (``--trusted-publishers``: the CI gate guide's publisher, pinned to the
``hub`` environment and ``refs/tags/v*``, and one CI job per tag run), the ``${{ }}`` expressions
get the values GitHub would give. Each job runs with a PATH of its venv and the system's
``/usr/bin:/bin``, its own HOME, ``PIP_CONFIG_FILE=/dev/null`` and no other ``PIP_*`` setting of
this machine (only a pip cache this script owns, shared between jobs: pip checks every file
against the lock's hash either way), so the install is the lock from PyPI, nothing else. The lock
is made by the CI gate guide's command (``scripts/ci_lock.py``) from this checkout's HEAD commit (so
commit what you rehearse) and checked with ``ci_lock.py --check``.

Scenarios, each with the verdict it must give (the script exits 1 on the first that differs):

1. a pull request before the first publish: passes, its plan creates the repo;
2. the tag ``v1.0``: the workflow's gate and publish jobs as written (``run:`` steps unedited under
   ``bash -eo pipefail``, ``uses:`` stood in for, ``if:`` honoured, the two Sigstore steps not
   run: they need Fulcio and Rekor), the push with the token the OIDC exchange gave: passes;
3. a pull request changing an artifact: passes, its plan lists it as changed;
4. a pull request changing nothing: passes, its plan changes nothing;
5. a pull request with a drifted file (bytes changed, manifest not): fails on that file;
6. a pull request changing nothing after someone edited a published file on the Hub: fails on it.

The pull requests go through ``pr_gate``: the gate job's own ``hubrelease check`` step as the
workflow writes it, its job summary (the plan) checked for what each scenario must name.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from huggingface_hub import HfApi

CHECKOUT = Path(__file__).resolve().parents[1]
WORKFLOW = CHECKOUT / ".github" / "workflows" / "release.yml"
WORKFLOW_DOC: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
GITHUB_REPO = "acme/drafter-release"
HUB_REPO = "acme/drafter"
ADMIN_TOKEN = "hf_rehearsal_admin"  # the Hub's owner, for tampering with it like a person on the web UI
SIGSTORE_FLAGS = ("--sigstore", "--signature")
HUBRELEASE = str(Path(sys.executable).parent / "hubrelease")  # this checkout's, to prepare the scratch repo
SYSTEM_CAS = "/etc/ssl/certs/ca-certificates.crt"
GIT_IDENTITY = ("-c", "user.name=ci", "-c", "user.email=ci@example.invalid")


def say(line: str) -> None:
    print(f"[rehearsal] {line}", flush=True)


def sh(*command: str, cwd: Path) -> str:
    return subprocess.run(command, cwd=cwd, check=True, capture_output=True, text=True).stdout


def commit(repo: Path, message: str) -> None:
    sh("git", "add", "-A", cwd=repo)
    sh("git", *GIT_IDENTITY, "commit", "-q", "--allow-empty", "-m", message, cwd=repo)


def write_release(repo: Path) -> None:
    """A release repository as a user keeps it: manifest, files, BOM, rendered card, the workflow, the lock."""
    release = repo / "release"
    release.mkdir(parents=True)
    files = {"model.safetensors": os.urandom(300_000), "config.json": b'{"architectures": ["X"]}\n'}
    artifacts = []
    for name, data in files.items():
        (release / name).write_bytes(data)
        artifacts.append({"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    manifest = {
        "schema_version": 1,
        "release": {"repo_id": HUB_REPO, "license": "mit"},
        "artifacts": artifacts,
    }
    (release / "hubrelease.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    sh(HUBRELEASE, "bom", "release/hubrelease.yaml", "-o", "release/bom.cdx.json", "--add", cwd=repo)
    sh(HUBRELEASE, "render-card", "release/hubrelease.yaml", cwd=repo)
    (repo / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(WORKFLOW, repo / ".github" / "workflows" / "release.yml")
    lock = CHECKOUT / "scripts" / "ci_lock.py"
    subprocess.run(
        [sys.executable, str(lock), str(repo)], cwd=CHECKOUT, check=True
    )  # the CI gate guide's command
    subprocess.run([sys.executable, str(lock), str(repo), "--check"], cwd=CHECKOUT, check=True)
    sh("git", "init", "-q", "-b", "main", cwd=repo)
    commit(repo, "release")


def change_artifact(repo: Path, name: str, data: bytes) -> None:
    """What a maintainer's pull request does: new bytes, then the manifest, BOM and card brought along."""
    (repo / "release" / name).write_bytes(data)
    sh(HUBRELEASE, "add", "release/hubrelease.yaml", f"release/{name}", cwd=repo)
    sh(HUBRELEASE, "bom", "release/hubrelease.yaml", "-o", "release/bom.cdx.json", "--add", cwd=repo)
    sh(HUBRELEASE, "render-card", "release/hubrelease.yaml", cwd=repo)


def expand(value: str, context: dict[str, str]) -> str:
    """``${{ a.b }}`` -> the value GitHub would give (unknown ones, e.g. secrets, are empty)."""
    return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: context.get(m.group(1), ""), value)


def evaluate(condition: str, context: dict[str, str]) -> bool:
    """The conditions the example uses: ``github.event_name == '...'``, ``always() && ...``, startsWith."""
    text = condition.replace("always() &&", "").strip()
    found = re.fullmatch(r"github\.event_name == '(\w+)'", text)
    if found:
        return context["github.event_name"] == found.group(1)
    found = re.fullmatch(r"startsWith\(github\.ref, '([^']+)'\)", text)
    if found:
        return context["github.ref"].startswith(found.group(1))
    raise SystemExit(f"[rehearsal] unknown condition {condition!r}: teach evaluate() about it")


@dataclass
class Hub:
    """``hubrelease hub serve`` in a process of its own, and the access-log lines it wrote."""

    url: str
    process: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)

    def statuses(self, method_path: str) -> list[str]:
        return [line.split()[2] for line in list(self.log) if line.startswith(f"{method_path} ")]


@contextmanager
def hub_serve(root: Path, trust: Path) -> Iterator[Hub]:
    root.mkdir()
    (root / "tokens").write_text(f"{ADMIN_TOKEN} write\n", encoding="utf-8")
    command = [HUBRELEASE, "hub", "serve", "--root", str(root / "data"), "--token-file", str(root / "tokens")]
    command += ["--anonymous-reads", "--trusted-publishers", str(trust)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert process.stderr is not None
    first = process.stderr.readline()
    if not first.startswith("loopback Hub at "):
        raise SystemExit(f"[rehearsal] hub serve did not start: {first}{process.stderr.read()}")
    hub = Hub(first.split()[3], process)
    reader = threading.Thread(target=lambda: hub.log.extend(iter(process.stderr.readline, "")), daemon=True)
    reader.start()
    try:
        yield hub
    finally:
        process.send_signal(signal.SIGINT)
        process.wait()


@dataclass
class Job:
    """One job of the workflow: its own checkout, venv and HOME, the lock installed by the workflow's step."""

    name: str
    checkout: Path
    env: dict[str, str]

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        """``command`` as a ``run:`` step (GitHub's shell: ``bash -e -o pipefail``), output kept."""
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command],
            cwd=self.checkout,
            env=self.env,
            capture_output=True,
            text=True,
        )

    def must(self, label: str, command: str) -> subprocess.CompletedProcess[str]:
        done = self.run(command)
        if done.returncode != 0:
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
            raise SystemExit(f"[rehearsal] {self.name}: step failed with exit {done.returncode}: {label}")
        return done


def start_job(work: Path, name: str, repo: Path, ref: str, hub: Hub, extra: dict[str, str]) -> Job:
    """actions/checkout (a clone at ``ref``) and setup-python (a fresh venv), then the lock's install step."""
    home = work / "jobs" / name
    checkout = home / "checkout"
    sh("git", "clone", "-q", str(repo), str(checkout), cwd=work)
    sh("git", "checkout", "-q", ref, cwd=checkout)
    venv.create(home / "venv", with_pip=True)
    (home / "runner-temp").mkdir()
    env = {
        "PATH": f"{home / 'venv' / 'bin'}{os.pathsep}/usr/bin:/bin",
        "HOME": str(home / "home"),
        "RUNNER_TEMP": str(home / "runner-temp"),
        "GITHUB_STEP_SUMMARY": str(home / "runner-temp" / "step-summary.md"),  # GitHub sets it for every job
        "LANG": "C.UTF-8",
        "PIP_CONFIG_FILE": os.devnull,  # no pip.conf of this machine (its indexes, find-links, constraints)
        "PIP_CACHE_DIR": str(work / "pip-cache"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        # The OS's CA bundle, which a runner's pip trusts too; ensurepip's pip reads only certifi's.
        **({"REQUESTS_CA_BUNDLE": SYSTEM_CAS} if Path(SYSTEM_CAS).is_file() else {}),
        "HF_ENDPOINT": hub.url,
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": GITHUB_REPO,
        "GITHUB_SHA": sh("git", "rev-parse", "HEAD", cwd=checkout).strip(),
        **{key: str(value) for key, value in WORKFLOW_DOC["env"].items()},
        **extra,
    }
    job = Job(name, checkout, env)
    [install] = {s["run"] for s in WORKFLOW_DOC["jobs"]["gate"]["steps"] if "pip install" in s.get("run", "")}
    job.must("install the lock", install)
    return job


def run_workflow_job(job: Job, spec: dict[str, Any], context: dict[str, str]) -> None:
    """Every step of ``spec`` as the workflow writes it, with the job's ``env``."""
    job.env.update({key: expand(str(value), context) for key, value in spec.get("env", {}).items()})
    for step in spec["steps"]:
        label = step.get("name") or step.get("run") or step.get("uses")
        condition = step.get("if")
        if condition is not None and not evaluate(condition, context):
            say(f"{job.name}: skipped (if: {condition}): {label}")
        elif any(flag in step.get("run", "") for flag in SIGSTORE_FLAGS):
            say(f"{job.name}: NOT RUN (needs Sigstore's Fulcio and Rekor): {label}")
        elif "uses" in step:
            say(f"{job.name}: stood in for: {step['uses'].split('@')[0]}")
        elif "pip install" in step["run"]:
            say(f"{job.name}: run when the job started: {label}")
        else:
            say(f"{job.name}: run: {label}")
            job.must(label, step["run"])


@dataclass(frozen=True)
class Verdict:
    passed: bool
    detail: str


def pr_gate(job: Job) -> Verdict:
    """A pull request's gate: the workflow's own ``hubrelease check`` step, as written; its exit code
    is the verdict and the job summary it writes (the plan a reviewer reads) the detail."""
    summary = Path(job.env["GITHUB_STEP_SUMMARY"])
    [step] = [
        s["run"] for s in WORKFLOW_DOC["jobs"]["gate"]["steps"] if "hubrelease check" in s.get("run", "")
    ]
    done = job.run(step)
    written = summary.read_text(encoding="utf-8") if summary.is_file() else ""
    return Verdict(done.returncode == 0, f"exit {done.returncode}\n{written or done.stdout + done.stderr}")


def expect(scenario: str, verdict: Verdict, passes: bool, *needles: str) -> None:
    """Print the verdict next to the expected one; stop (exit 1) when they differ."""
    got, want = ("PASS" if verdict.passed else "FAIL"), ("PASS" if passes else "FAIL")
    say(f"{scenario}: {got} (expected {want}): {verdict.detail}")
    missing = [n for n in needles if n not in verdict.detail]
    if got != want or missing:
        raise SystemExit(f"[rehearsal] {scenario}: expected {want} naming {missing or 'nothing more'}")


@dataclass
class Rehearsal:
    """The scratch release repository, the Hub, and the pull requests opened so far."""

    work: Path
    repo: Path
    hub: Hub
    pulls: int = 0

    def branch(self, name: str) -> None:
        sh("git", "checkout", "-q", "-b", name, "main", cwd=self.repo)

    def pull_request(self, scenario: str, branch: str, passes: bool, needle: str) -> None:
        """A pull request of ``branch`` into main through ``pr_gate``, in a job of its own."""
        self.pulls += 1
        number = self.pulls
        job = start_job(
            self.work, f"pr-{number}", self.repo, branch, self.hub, {"GITHUB_REF_NAME": f"{number}/merge"}
        )
        expect(scenario, pr_gate(job), passes, needle)

    def publish(self, tag: str, request_token: str, claims: dict[str, str]) -> Verdict:
        """A tag push: the workflow's gate job, then its publish job with a CI job's OIDC environment."""
        sh("git", "tag", tag, "main", cwd=self.repo)
        run = {"github.event_name": "push", "github.ref": f"refs/tags/{tag}", "vars.HF_REPO_ID": HUB_REPO}
        ci = {"GITHUB_REF_NAME": tag, "GITHUB_WORKFLOW_REF": claims["workflow_ref"]}
        oidc = {
            "ACTIONS_ID_TOKEN_REQUEST_URL": f"{self.hub.url}/__oidc/github",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": request_token,
        }
        jobs = WORKFLOW_DOC["jobs"]
        run_workflow_job(start_job(self.work, f"gate-{tag}", self.repo, tag, self.hub, ci), jobs["gate"], run)
        publish = start_job(self.work, f"publish-{tag}", self.repo, tag, self.hub, ci | oidc)
        run_workflow_job(publish, jobs["publish"], run)
        exchanges = self.hub.statuses("POST /oauth/token")
        tags = [t.name for t in HfApi(endpoint=self.hub.url, token=ADMIN_TOKEN).list_repo_refs(HUB_REPO).tags]
        passed = tag in tags and bool(exchanges) and set(exchanges) == {"200"}
        return Verdict(passed, f"Hub tags {tags}, token exchanges {exchanges}")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ci-rehearsal-") as tmp:
        work = Path(tmp)
        repo = work / "repo"
        write_release(repo)
        tag = "v1.0"
        claims = {
            "repository": GITHUB_REPO,
            "ref": f"refs/tags/{tag}",
            "workflow_ref": f"{GITHUB_REPO}/.github/workflows/release.yml@refs/tags/{tag}",
            "environment": WORKFLOW_DOC["jobs"]["publish"]["environment"],
        }
        request_token = os.urandom(16).hex()
        trust = work / "trust"
        trust.write_text(
            f"publisher {HUB_REPO} repository={GITHUB_REPO} workflow=release.yml environment=hub ref=refs/tags/v*\n"
            f"job {request_token} " + " ".join(f"{k}={v}" for k, v in claims.items()) + "\n",
            encoding="utf-8",
        )
        with hub_serve(work / "hub", trust) as hub:
            rehearsal = Rehearsal(work, repo, hub)
            rehearsal.branch("pr-1")
            rehearsal.pull_request(
                "1. pull request before the first publish", "pr-1", True, "creates the repo"
            )

            published = rehearsal.publish(tag, request_token, claims)
            expect(f"2. tag {tag}: gate and publish jobs", published, True, f"Hub tags ['{tag}']")

            rehearsal.branch("pr-2")
            change_artifact(repo, "config.json", b'{"architectures": ["Y"]}\n')
            commit(repo, "next release: config.json")
            rehearsal.pull_request(
                "3. pull request changing an artifact", "pr-2", True, "| changed | config.json |"
            )

            rehearsal.branch("pr-3")
            commit(repo, "a pull request that changes nothing in the release")
            rehearsal.pull_request(
                "4. pull request changing nothing", "pr-3", True, "0 added, 0 changed, 0 removed"
            )

            rehearsal.branch("pr-4")
            (repo / "release" / "model.safetensors").write_bytes(os.urandom(300_000))
            commit(repo, "new weights, manifest not updated")
            rehearsal.pull_request("5. pull request with a drifted file", "pr-4", False, "model.safetensors")

            tampered = b'{"architectures": ["Z"]}\n'  # someone on the Hub's web editor
            HfApi(endpoint=hub.url, token=ADMIN_TOKEN).upload_file(
                path_or_fileobj=tampered, path_in_repo="config.json", repo_id=HUB_REPO
            )
            rehearsal.pull_request("6. published file tampered with on the Hub", "pr-3", False, "config.json")
        say("OK: every scenario gave its expected verdict, each job in a fresh venv installed from the lock")


if __name__ == "__main__":
    main()
