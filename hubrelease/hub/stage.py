"""A release larger than one commit carries: staged on a pull request, landed on the branch in one merge.

Why: one commit carries at most 25k files and 1 GB of regular files (``plan.CommitLimits``), and
the peers split a larger upload into "(part N)" commits on the branch itself (huggingface_hub
``_upload_pipeline.py:650``), so readers of the branch see half a release until the last part lands.
Here the parts are commits on ``refs/pr/N``, which no reader of the branch sees: the first opens
the pull request (``create_commit(create_pr=True)`` from the planned parent), the others follow on
``revision="refs/pr/N"``, each guarded by ``parent_commit`` = the PR's head and uploaded in batches
as a single push is (``commit.upload_and_commit``). The PR's head is then verified remotely (every
file by digest, from metadata: no weight byte is read), taken out of draft and merged
(``HfApi.merge_pull_request``): one commit on the branch, so its readers see the old release or the
new one.

Resume: the PR's title ends with a marker, ``[hubrelease staging KEY]``, KEY a digest of the repo,
the branch, the parent commit and every (path, sha256) and deletion. A re-run of the same release on
the same parent finds the open PR with that marker, compares the files at its head with the plan by
digest and stages only the rest; uploaded data is deduplicated as for any push.

Failure: exit 4 (the Hub unreachable, refusing, rate limiting) leaves the PR open for a re-run to
resume; any other failure (someone else pushed, a file changed, the staged PR does not verify, the
merge is refused) closes it, with a comment saying why. The branch is unchanged either way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Generic, TypeVar

from huggingface_hub import DiscussionWithDetails, HfApi

from hubrelease.errors import CheckFailed, HubError, HubReleaseError, RemoteMovedError, with_outcome
from hubrelease.hub.batches import batches
from hubrelease.hub.client import hub_errors, metadata
from hubrelease.hub.metadata import list_files, resolve_commit
from hubrelease.hub.plan import CommitLimits, PushPlan, RemoteSnapshot
from hubrelease.hub.remote_verify import verify_remote
from hubrelease.outcome import Outcome

U = TypeVar("U")
CommitPart = Callable[[PushPlan, Outcome, str, bool], tuple[Outcome, int, str | None, U]]
"""(part, unchanged outcome, message, create_pr) -> (outcome, attempts, PR URL, upload report)."""
Notify = Callable[[str], None]


@dataclass(frozen=True)
class StageReport:
    """How the release was staged: the PR, commits made by this run, files found staged already."""

    pr_num: int
    commits: int
    resumed_files: int
    merged: bool

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Staged(Generic[U]):
    """The outcome (merged onto the branch, or the PR with ``create_pr``), attempts, PR URL, uploads."""

    outcome: Outcome
    attempts: int
    pr_url: str | None
    uploads: list[U]
    report: StageReport


def staging_key(plan: PushPlan, parent: str) -> str:
    """Names one staging: the same release planned on the same parent gives the same key."""
    facts = [
        plan.repo_type,
        plan.repo_id,
        plan.revision,
        parent,
        [[f.path, f.sha256] for f in plan.files],
        [f.path for f in plan.deleted],
    ]
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:16]


def marker(key: str) -> str:
    return f"[hubrelease staging {key}]"


def parts(plan: PushPlan, limits: CommitLimits) -> list[PushPlan]:
    """The plan's changes as staged commits: deletions first, then the uploads in plan order, each
    part within ``limits`` (``batches.batches`` cuts them as it cuts upload batches)."""
    deleted = plan.deleted
    out = [
        replace(plan, files=(), deleted=deleted[first : first + limits.staged_files])
        for first in range(0, len(deleted), limits.staged_files)
    ]
    uploads = plan.with_status("added", "changed")
    for batch in batches(uploads, limits.bytes, limits.staged_files, limits.regular_bytes):
        out.append(replace(plan, files=batch.files, deleted=()))
    return out


def stage_and_merge(
    api: HfApi,
    plan: PushPlan,
    parent: str,
    commit: CommitPart[U],
    *,
    limits: CommitLimits,
    message: str,
    create_pr: bool,
    notify: Notify,
) -> Staged[U]:
    """Stage ``plan`` on a pull request from ``parent`` (resuming an open one), verify, merge.

    With ``create_pr`` the staged PR is the result: it stays open for review, unmerged.
    """
    unchanged = Outcome("unchanged", plan.repo_id, plan.revision, parent)
    tag = marker(staging_key(plan, parent))
    title = f"{message} {tag}"
    num = _open_staging(api, plan, tag)
    remaining, head = plan, parent
    if num is not None:
        head = resolve_commit(api, plan.repo_id, f"refs/pr/{num}", plan.repo_type)
        remaining = plan.against(RemoteSnapshot(head, list_files(api, plan.repo_id, head, plan.repo_type)))
    todo = parts(remaining, limits)
    resumed = len(plan.with_status("added", "changed")) - len(remaining.with_status("added", "changed"))
    notify(
        f"staging: {len(todo)} commit(s) on "
        + (f"pull request #{num} ({resumed:,} file(s) staged there already)" if num else "a new pull request")
        + ("" if create_pr else f", then one merge into {plan.revision}")
    )
    attempts, pr_url, uploads = 0, None, []
    try:
        for index, part in enumerate(todo, 1):
            ref = plan.revision if num is None else f"refs/pr/{num}"
            before = Outcome("unchanged", plan.repo_id, ref, head)
            text = title if num is None else f"{message} (staged part {index} of {len(todo)})"
            outcome, tries, url, upload = commit(
                replace(part, revision=ref, parent_commit=head), before, text, num is None
            )
            attempts, pr_url, head = attempts + tries, pr_url or url, str(outcome.commit)
            uploads.append(upload)
            if num is None:
                assert outcome.ref is not None and outcome.ref.startswith("refs/pr/")
                num = int(outcome.ref.rpartition("/")[2])
            notify(f"staged part {index} of {len(todo)} on pull request #{num} at {head[:12]}")
        assert num is not None  # a staged plan has changes, so the first part opened the PR
        _verify_staged(api, plan, head, num)
        landed = (
            Outcome("landed", plan.repo_id, f"refs/pr/{num}", head)
            if create_pr
            else _merge(api, plan, parent, num)
        )
    except HubReleaseError as exc:
        raise _after_failure(api, plan, exc, num, unchanged) from None
    report = StageReport(num, len(todo), resumed, not create_pr)
    return Staged(landed, attempts + (not create_pr), pr_url, uploads, report)


def _open_staging(api: HfApi, plan: PushPlan, tag: str) -> int | None:
    """The number of the open pull request whose title ends with this staging's marker, if any
    (whatever ``--message`` the killed run had)."""
    found = metadata(
        plan.repo_id,
        None,
        lambda: [
            d.num
            for d in api.get_repo_discussions(
                plan.repo_id,
                repo_type=plan.repo_type,
                discussion_type="pull_request",
                discussion_status="open",
            )
            if d.title.endswith(tag)
        ],
    )
    return max(found) if found else None


def _verify_staged(api: HfApi, plan: PushPlan, head: str, num: int) -> None:
    """The staged head holds exactly the release (remote verify: digests from metadata), else stop."""
    report = verify_remote(plan.manifest, api, head, manifest_path=plan.manifest_path, root=plan.root)
    if report.has_drift:
        first = report.errors[0]
        raise CheckFailed(
            f"{plan.repo_id}: the release staged on pull request #{num} does not verify "
            f"({len(report.errors)} finding(s), first: {first.path}: {first.message})"
        )


def _merge(api: HfApi, plan: PushPlan, parent: str, num: int) -> Outcome:
    """Merge the staged PR into the branch, which must still be at ``parent`` (else someone pushed)."""
    head = resolve_commit(api, plan.repo_id, plan.revision, plan.repo_type)
    if head != parent:
        raise RemoteMovedError(
            f"{plan.repo_id}@{plan.revision} moved to {head[:12]} while the release was staged on "
            f"{parent[:12]}: someone else pushed",
            repo_id=plan.repo_id,
            status=412,
        )
    if _details(api, plan, num).status == "draft":
        # A PR that create_commit opens is a draft; huggingface_hub's own merge test opens it first
        # (tests/test_hf_api.py:3070, test_merge_pull_request, at ee0a4510).
        with hub_errors(plan.repo_id):
            api.change_discussion_status(plan.repo_id, num, "open", repo_type=plan.repo_type)
    try:
        with hub_errors(plan.repo_id, plan.revision):
            api.merge_pull_request(
                plan.repo_id, num, repo_type=plan.repo_type, comment="Staged and verified by hubrelease."
            )
    except HubError as exc:
        if exc.status == 409:  # the Hub refuses a merge that conflicts with the branch
            raise RemoteMovedError(
                f"{plan.repo_id}: the Hub refused to merge pull request #{num} ({exc.message})",
                repo_id=plan.repo_id,
                status=409,
            ) from None
        if _merged(api, plan, num) is None:  # a lost answer: the merge may have happened anyway
            raise
    merged = _merged(api, plan, num)
    commit = merged or resolve_commit(api, plan.repo_id, plan.revision, plan.repo_type)
    return Outcome("landed", plan.repo_id, plan.revision, commit)


def _details(api: HfApi, plan: PushPlan, num: int) -> DiscussionWithDetails:
    return metadata(
        plan.repo_id, None, lambda: api.get_discussion_details(plan.repo_id, num, repo_type=plan.repo_type)
    )


def _merged(api: HfApi, plan: PushPlan, num: int) -> str | None:
    """The merge commit of pull request ``num`` if it is merged, else None."""
    details = _details(api, plan, num)
    return details.merge_commit_oid if details.status == "merged" else None


def _after_failure(
    api: HfApi, plan: PushPlan, exc: HubReleaseError, num: int | None, unchanged: Outcome
) -> HubReleaseError:
    """The error to raise: the branch is unchanged; the PR left open to resume (exit 4) or closed."""
    if num is None:
        return exc
    if exc.exit_code == 4:
        what = f"the staging is kept on pull request #{num}: re-run push to resume it"
    else:
        try:
            with hub_errors(plan.repo_id):
                api.change_discussion_status(
                    plan.repo_id,
                    num,
                    "closed",
                    comment=f"Staging stopped: {exc.message}",
                    repo_type=plan.repo_type,
                )
            what = f"pull request #{num} was closed"
        except HubError as closing:
            what = f"pull request #{num} could not be closed ({closing.message}); close it by hand"
    text = f"{exc.message}; {unchanged.clause()}; {what}"
    if isinstance(exc, HubError):
        return with_outcome(exc, text, unchanged)
    exc.message = text  # same class, path and field (a changed file, a drifted PR): the line grows
    return exc
