"""`hubrelease check`: everything a pull request to a release repository can get wrong, and what it would publish.

A CI gate that compares the proposed release with the published one fails the very pull requests it
exists for (the change under review is the difference), and one that cannot run before the first
publish is switched off. So the gate checks the proposal on its own terms (local verify, lint, the
card, the recipes, the pins on the Hub), then plans its push against what is published and reports
that plan, failing only on what no pull request should bring: a file changed on the Hub outside a
release (``hub.published``). The preview's page check (broken links and images, front matter the
Hub would refuse) runs last, on an embedded loopback Hub. Every check runs and is reported; a check
that cannot run because an earlier one failed says so. The result is data: the CLI renders it as
text, ``--json`` and a Markdown job summary (``markdown``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from hubrelease.errors import CheckFailed
from hubrelease.fsutil import atomic_write_text
from hubrelease.hub.plan import build_plan, check_limits, read_remote
from hubrelease.hub.published import Published, against_published
from hubrelease.hub.remote_verify import pin_findings
from hubrelease.lint.licenses import license_findings
from hubrelease.manifest import load_manifest, release_root
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.release_files import card_published, count_files
from hubrelease.sizes import human_bytes
from hubrelease.verify import verify_manifest
from hubrelease.verify.preflight import unpinned_revisions

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from hubrelease.findings import Finding, VerifyReport
    from hubrelease.hub.plan import PushPlan
    from hubrelease.manifest.models import Manifest

CheckName = Literal["verify", "lint", "card", "rebuild", "pins", "plan", "published", "preview"]
Verdict = Literal["pass", "fail", "skipped"]


@dataclass(frozen=True)
class GateCheck:
    """One check: its verdict, one line of detail, and each problem as ``path: message``."""

    name: CheckName
    verdict: Verdict
    detail: str
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "verdict": self.verdict,
            "detail": self.detail,
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class GateReport:
    """Every check in order, and the push plan against the published release (None when not planned)."""

    repo_id: str
    revision: str
    checks: tuple[GateCheck, ...]
    plan: PushPlan | None = None
    published: Published | None = None

    @property
    def fetched_bytes(self) -> int:
        """Bytes of the release repo downloaded: the published manifest only (no weight bytes)."""
        return self.published.fetched_bytes if self.published is not None else 0

    @property
    def ok(self) -> bool:
        return all(check.verdict != "fail" for check in self.checks)

    def to_dict(self) -> dict[str, object]:
        """The body of ``check --json`` (docs/how-to/ci-gate.md)."""
        published = self.published
        return {
            "ok": self.ok,
            "repo_id": self.repo_id,
            "revision": self.revision,
            "checks": [check.to_dict() for check in self.checks],
            "plan": self.plan.to_dict() if self.plan is not None else None,
            "creates_repo": self.plan is not None and self.plan.parent_commit is None,
            "published": None
            if published is None
            else {
                "commit": published.commit,
                "manifest": published.manifest,
                "outside": [f.to_dict() for f in published.outside],
            },
            "fetched_bytes": self.fetched_bytes,
        }


def _counted(report: VerifyReport, manifest_path: Path) -> str:
    """The release's one count (``count_files``), as verify says it."""
    count = count_files([f.path for f in report.files], manifest_path)
    return f"{count.files} files ({manifest_path.name} and the {count.pinned} it pins)"


def _row(name: CheckName, problems: list[str], passed: str) -> GateCheck:
    """Pass with ``passed`` as its detail, or fail naming the first problem."""
    if not problems:
        return GateCheck(name, "pass", passed)
    return GateCheck(name, "fail", f"{len(problems)} problem(s), first: {problems[0]}", tuple(problems))


def _named(findings: list[Finding]) -> list[str]:
    return [f"{f.path}: {f.message}" for f in findings]


def check_release(
    api: HfApi,
    manifest_path: Path,
    directory: Path | None = None,
    *,
    preview: bool = True,
    progress: Progress = NULL_PROGRESS,
    inputs: Sequence[Path] = (),
    summary: Path | None = None,
) -> GateReport:
    """Run every check of the pull-request gate on the manifest at ``manifest_path`` (``directory``: ``--dir``);
    with ``summary``, also write the report there as Markdown (a CI job summary), atomically."""
    report = _gate(api, manifest_path, directory, preview=preview, progress=progress, inputs=inputs)
    if summary is not None:
        atomic_write_text(summary, markdown(report))
    return report


def _gate(
    api: HfApi,
    manifest_path: Path,
    directory: Path | None,
    *,
    preview: bool,
    progress: Progress,
    inputs: Sequence[Path],
) -> GateReport:
    manifest = load_manifest(manifest_path)
    root = release_root(manifest, manifest_path, directory)
    release = manifest.release
    report = verify_manifest(manifest, manifest_path, root, progress=progress)
    card = manifest.card_output
    drift = [f for f in report.errors if f.kind != "lint" and f.path != card]
    checks = [
        _row("verify", _named(drift), f"{_counted(report, manifest_path)} as pinned (size, then sha256)"),
        _lint(manifest, report.errors),
        _card(manifest, manifest_path, root, directory, [f for f in report.errors if f.path == card]),
        _rebuild(manifest, manifest_path, root, api, inputs),
        _pins(manifest, api),
    ]
    if any(check.verdict == "fail" for check in checks[:3]):
        why = "not planned: the release folder does not verify, lint or render (see above)"
        checks += [GateCheck(name, "skipped", why) for name in ("plan", "published", "preview")]
        return GateReport(release.repo_id, release.revision, tuple(checks))
    remote = read_remote(api, manifest)
    plan = build_plan(manifest, manifest_path, root, remote)
    published = against_published(api, plan, remote)
    warnings = check_limits(plan)  # the Hub's hard limits refuse the push (exit 2), as push --dry-run does
    checks.append(GateCheck("plan", "pass", "; ".join([_plan_line(plan), *warnings])))
    checks.append(_row("published", _named(list(published.outside)), _published_line(published)))
    checks.append(
        _preview(manifest_path, directory, progress)
        if preview
        else GateCheck("preview", "skipped", "--no-preview")
    )
    return GateReport(release.repo_id, release.revision, tuple(checks), plan, published)


def _lint(manifest: Manifest, errors: list[Finding]) -> GateCheck:
    problems = _named([f for f in errors if f.kind == "lint"])
    problems += [f"licence: {f.message}" for f in license_findings(manifest) if f.severity == "error"]
    linted = sum(1 for a in manifest.artifacts if a.lint)
    return _row("lint", problems, f"{linted} artifact(s) linted, licences agree")


def _card(
    manifest: Manifest, manifest_path: Path, root: Path, directory: Path | None, found: list[Finding]
) -> GateCheck:
    """``render-card --check``: a rendered card (and its charts) is a fresh render; a hand-written one its pin."""
    name = manifest.card_output
    if not card_published(manifest, root):
        return GateCheck("card", "skipped", f"no card: {name} is not in the release folder")
    hand_written = manifest.card is not None and manifest.card.hand_written
    if hand_written or any(f.kind == "unpinned" for f in found):  # pinned, or neither pinned nor rendered
        return _row("card", _named(found), f"{name} (hand-written) as pinned")
    from hubrelease.card import check_card

    result = check_card(manifest_path, root=directory)
    if result.current:
        return GateCheck("card", "pass", f"{name} is a fresh render of the manifest and evaluation files")
    why = "missing" if result.actual is None else "differs from a fresh render"
    charts = [f"{chart}: missing, differs or not pinned as drawn" for chart in result.stale_charts]
    stale = [] if result.actual == result.expected else [f"{name}: {why}; run `hubrelease render-card`"]
    return GateCheck("card", "fail", f"{name} or its charts are stale", tuple(stale + charts))


def _rebuild(
    manifest: Manifest, manifest_path: Path, root: Path, api: HfApi, inputs: Sequence[Path]
) -> GateCheck:
    """``rebuild --check`` when the manifest has recipes: every output rebuilds to its pinned bytes
    (reading outside the release only from ``inputs``; a recipe naming any other path fails)."""
    from hubrelease.manifest.jobs import plan_jobs
    from hubrelease.recipes.confine import RecipeRefused
    from hubrelease.recipes.rebuild import rebuild

    if not plan_jobs(manifest):
        return GateCheck("rebuild", "skipped", "no recipes")
    try:
        results = rebuild(manifest, manifest_path, root, hub=lambda: api, inputs=inputs).results
    except RecipeRefused as exc:
        return _row("rebuild", [exc.message], "")
    problems = [
        f"{r.output.path}: {r.status}" + (f": {r.detail}" if r.detail else "")
        for r in results
        if r.status not in ("identical", "skipped")
    ]
    return _row("rebuild", problems, f"{len(results)} file(s) rebuilt to the pinned bytes")


def _pins(manifest: Manifest, api: HfApi) -> GateCheck:
    """Push's preflight of the pins: each a commit (or marked unpinned), on the Hub as pinned."""
    problems = [
        f"{pin}: not a commit; run `hubrelease lock`, or mark it unpinned: true"
        for pin in unpinned_revisions(manifest)
    ]
    problems += _named([f for f in pin_findings(api, manifest) if f.severity == "error"])
    pins = manifest.pins
    count = len(pins.targets) + len(pins.base_drafters) + len(pins.datasets)
    return _row(
        "pins", problems, f"{count} pinned repo(s) on the Hub as pinned" if count else "no pinned repos"
    )


def _plan_line(plan: PushPlan) -> str:
    counts = {s: len(plan.with_status(s)) for s in ("added", "changed", "unchanged")}
    where = f"on {plan.parent_commit[:12]}" if plan.parent_commit else "creates the repo"
    return (
        f"{counts['added']} added, {counts['changed']} changed, {len(plan.deleted)} removed, "
        f"{counts['unchanged']} unchanged; {human_bytes(plan.upload_bytes)} to upload, {where}"
    )


def _published_line(published: Published) -> str:
    if published.commit is None:
        return "nothing published yet"
    if published.manifest is None:
        return f"no published manifest at {published.commit[:12]}: files compared with this release only"
    return f"every file this release does not change is on the Hub as {published.manifest} pins it"


def _preview(manifest_path: Path, directory: Path | None, progress: Progress) -> GateCheck:
    """The card's page on an embedded local Hub: broken links and images, front matter the Hub refuses."""
    from hubrelease.local_hub import MISSING, installed
    from hubrelease.preview import open_preview

    if not installed():  # a runner with the client alone: said in the summary, not a failure
        return GateCheck("preview", "skipped", f"not previewed: {MISSING}")
    try:
        with open_preview(manifest_path, directory, progress=progress) as page:
            problems = [f"{p.kind}: {p.message}" for p in page.problems]
    except CheckFailed as exc:  # push's preflight, which the checks above have reported already
        return GateCheck("preview", "skipped", f"not previewed: {exc}")
    return _row("preview", problems, "the page has no broken links or images, and its front matter is valid")


def _cell(text: str) -> str:
    """Text as one Markdown table cell: pipes, backslashes and inline markup escaped, one line."""
    escaped = "".join(f"\\{c}" if c in "\\|`*_[]<>#" else c for c in text)
    return " ".join(escaped.split())


MARK = {"pass": "pass", "fail": "**FAIL**", "skipped": "skipped"}


def markdown(report: GateReport) -> str:
    """The job summary a reviewer reads: each check, then the plan's files (GitHub-flavoured Markdown)."""
    verdict = "passed" if report.ok else "FAILED"
    lines = [
        f"### hubrelease check: {_cell(report.repo_id)}@{_cell(report.revision)} {verdict}",
        "",
        "| check | verdict | detail |",
        "| --- | --- | --- |",
    ]
    for check in report.checks:
        lines.append(f"| {check.name} | {MARK[check.verdict]} | {_cell(check.detail)} |")
    problems = [(check.name, p) for check in report.checks for p in check.problems]
    if problems:
        lines += ["", "| check | problem |", "| --- | --- |"]
        lines += [f"| {name} | {_cell(problem)} |" for name, problem in problems]
    plan = report.plan
    if plan is not None:
        where = f"{plan.parent_commit[:12]}" if plan.parent_commit else "a new repo (the push creates it)"
        lines += [
            "",
            f"#### What a push publishes, on {where}",
            "",
            "| status | path | size |",
            "| --- | --- | ---: |",
        ]
        rows: list[tuple[str, str, int]] = [
            (f.status, f.path, f.size) for f in plan.files if f.status != "unchanged"
        ]
        rows += [("removed", f.path, f.size) for f in plan.deleted]
        edited = {f.path for f in report.published.outside} if report.published is not None else set()
        lines += [
            f"| {status}{' (edited on the Hub)' * (path in edited)} | {_cell(path)} | {human_bytes(size)} |"
            for status, path, size in rows
        ]
        same = plan.with_status("unchanged")
        lines += [
            "",
            f"{len(same)} unchanged file(s), {human_bytes(sum(f.size for f in same))}, match the Hub by "
            f"sha256 or git blob id; {report.fetched_bytes} bytes downloaded (the published manifest).",
        ]
    return "\n".join(lines) + "\n"
