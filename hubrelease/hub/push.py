"""A ``PushPlan`` -> data uploaded batch by batch, then exactly one commit on the Hub, or none.

A release larger than one commit carries (``plan.CommitLimits``) is staged on a pull request in
several such commits and lands on the branch as one merge commit (``stage.py``).

The pipeline, one module a step: ``safe_open.py`` opens the files to upload, ``batches.py`` plans
the batches, ``upload.py`` sends them (``multipart.py`` the parts of large LFS objects), ``commit.py`` makes the commit attempts and ``recovery.py``
says what a failed one means and whether a lost one landed, ``tagging.py`` checks the tag, and
``xet_env.py`` bounds hf_xet's retries; ``push_state.PushState`` carries one commit's context.

Upload: the files to add go up in batches (``batches.py``: a large file alone, small ones grouped),
one ``preupload_lfs_files`` call each, five at once (the parts of a large LFS object on five
workers, ``multipart.py``), so the Hub registers each batch's data as it completes and a
killed, failed or interrupted push re-run sends only what the Hub does not hold yet. Nothing is
visible until the commit. A batch that fails is retried alone (``max_attempts``, waiting 2 s, 4 s or
what a 429 asks for); the batches before it are not sent again. Before each batch and again before
the commit, every file's stat must still be the one its digest was taken at, so only the pinned
bytes can land.

Reads: every file to upload is opened once, before any byte is sent, without following a symlink
(``fsutil.open_regular``), and must be the file its digest was taken from (same inode, size,
mtimes); the uploads read that open file (``/proc/self/fd/N``), so a file swapped for a symlink to
the token file meanwhile sends nothing of it. Before each batch and again before the commit, the
open file and the name must both still have that stat, so only the pinned bytes land.

Commit: one ``HfApi.create_commit`` carries every added, changed and deleted file, guarded by
``parent_commit`` = the head read when planning. That guard makes every retry safe: a commit that
already landed turns a retry into a 412 instead of a duplicate. The operations are built once, with
the sha256 the plan already has (``UploadInfo.sha256``, so neither the LFS path nor hf_xet hashes a
file again), and reused by every attempt.

The outcome is data (``outcome.Outcome``: unchanged / landed / unknown, the ref and the commit), on
the result and on every error, whose one line ends with what it means:

- 412: someone else pushed since planning -> ``RemoteMovedError`` (exit 1: re-run to plan again);
  nothing of ours landed. On a retry, a 412 whose new head holds exactly this release is our
  earlier attempt, landed late. With ``create_pr`` the Hub opens the PR from ``parent_commit``
  and never answers 412.
- 429: wait as the ``RateLimit``/``Retry-After`` headers say, at most ``MAX_RATE_LIMIT_WAIT`` (a
  longer wait is not waited: exit 4 naming it); 409 ("another commit in progress"): back off, retry.
- 401/403 (also on Xet's token route, which hf_xet reports as a bare ``ConnectionError``, so the
  route is asked again after a Xet-stage failure), another refusal: ``HubUnavailable`` at once.
- During the upload, a 5xx, a dropped connection or an hf_xet failure: nothing can have landed;
  the batch is retried, then ``HubUnavailable`` (exit 4) with the remote unchanged.
- During the commit, a 5xx, a 404, a dropped connection or a non-JSON answer: the branch (or the
  PRs) are read back. Moved to a commit holding exactly this release -> ours landed; moved
  elsewhere -> someone else pushed; unchanged -> lost, retried; unreadable -> ``unknown``.
- validate-yaml 400 (the Hub refuses README.md's metadata): ``MetadataRefused`` (exit 2).
- ``--tag``: checked before uploading; a tag that already names another commit stops the push.
- After the commit landed, any failure (tag, remote verify) is ``StepFailedAfterLanding``.

Bounded time: hf_xet retries a failed request itself (``HF_XET_CLIENT_RETRY_*``); unless set by
the user, push bounds that to 3 tries 1-4 s apart, so a batch whose connection drops every time
reaches exit 4 after 3 x 3 tries (docs/manual/publishing.md, "push": the time measured in ``bench/RESULTS.md``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields

from huggingface_hub import HfApi

from hubrelease.errors import HubError, HubReleaseError, InputError, StepFailedAfterLanding, with_outcome
from hubrelease.findings import VerifyReport
from hubrelease.hub import client
from hubrelease.hub.batches import DEFAULT_BATCH_BYTES
from hubrelease.hub.client import hub_errors
from hubrelease.hub.commit import Committer
from hubrelease.hub.metadata import repo_info
from hubrelease.hub.plan import CommitLimits, PushPlan
from hubrelease.hub.push_state import Notify
from hubrelease.hub.recovery import pull_requests
from hubrelease.hub.remote_verify import verify_remote
from hubrelease.hub.stage import StageReport, stage_and_merge
from hubrelease.hub.tagging import tag_is_free
from hubrelease.hub.upload import UploadReport
from hubrelease.outcome import Outcome

__all__ = ["Notify", "PushResult", "push_release"]


@dataclass(frozen=True)
class PushResult:
    """What happened: the outcome (landed or unchanged, where), PR and tag, upload, remote verify."""

    outcome: Outcome
    attempts: int
    """Commit attempts (0 when there was nothing to commit)."""
    pr_url: str | None
    tag: str | None
    report: VerifyReport | None
    created: str | None = None
    """``'private'``/``'public'`` when this push created the repo, else None."""
    upload: UploadReport | None = None
    staged: StageReport | None = None
    """How a release larger than one commit was staged on a pull request (``stage.py``), else None."""

    @property
    def commit(self) -> str:
        assert self.outcome.commit is not None  # a result is landed or unchanged on a known head
        return self.outcome.commit

    @property
    def landed(self) -> bool:
        return self.outcome.landed

    @property
    def pr_revision(self) -> str | None:
        ref = self.outcome.ref
        return ref if ref is not None and ref.startswith("refs/pr/") else None

    def to_dict(self) -> dict[str, object]:
        """``result`` in ``push --json`` (docs/manual/publishing.md, "push --json")."""
        return {
            "outcome": self.outcome.to_dict(),
            "commit": self.commit,
            "landed": self.landed,
            "ref": self.outcome.ref,
            "attempts": self.attempts,
            "pr_url": self.pr_url,
            "pr_revision": self.pr_revision,
            "tag": self.tag,
            "created": self.created,
            "upload": None if self.upload is None else self.upload.to_dict(),
            "staged": None if self.staged is None else self.staged.to_dict(),
        }


def _visibility(plan: PushPlan, private: bool | None) -> None:
    """Refuse a push that would publish a private release as public or the other way round."""
    if private is None or plan.remote_private is None or plan.remote_private == private:
        return
    have, want = ("private", "public") if plan.remote_private else ("public", "private")
    raise InputError(
        f"{plan.repo_id} is {have} on the Hub but this push asks for {want} (release.private or "
        f"--private/--public); nothing was pushed; change the visibility on the Hub first "
        f"(`hf repos settings {plan.repo_id} --{'no-' if want == 'public' else ''}private`) or in the manifest",
        field="release.private",
    )


def push_release(
    api: HfApi,
    plan: PushPlan,
    *,
    message: str,
    create_pr: bool = False,
    tag: str | None = None,
    private: bool | None = None,
    notify: Notify = lambda _: None,
    sleep: Callable[[float], None] | None = None,
    max_attempts: int = 3,
    verify: bool = True,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    limits: CommitLimits = CommitLimits(),
) -> PushResult:
    """Publish ``plan`` as one commit (see the module docstring for the failure rules), or, above
    ``limits``, staged on a pull request and merged as one commit (``stage.py``).

    ``private`` is the visibility the release asks for (None: whatever the Hub decides / has).
    """
    wait = sleep or client.sleep
    before = Outcome("unchanged", plan.repo_id, plan.revision, plan.parent_commit)
    with _before_landing(before):
        _visibility(plan, private)
        parent = plan.parent_commit
        created, new_branch = None, plan.create_branch
        if parent is None:
            with hub_errors(plan.repo_id):
                api.create_repo(plan.repo_id, repo_type=plan.repo_type, private=private, exist_ok=True)
            made = repo_info(api, plan.repo_id, "main", plan.repo_type)  # what the Hub made of it
            parent, created = str(made.sha), "private" if made.private else "public"
            new_branch = plan.revision != "main"
        if new_branch and not create_pr:
            # The Hub commits only to existing branches; the new one starts at main's head, which
            # is also the parent the commit is guarded by (hf upload --revision does the same).
            with hub_errors(plan.repo_id):
                api.create_branch(
                    plan.repo_id,
                    branch=plan.revision,
                    revision=parent,
                    repo_type=plan.repo_type,
                    exist_ok=True,
                )
        create_tag = tag is not None and tag_is_free(api, plan, tag, parent)
        prs_before = pull_requests(api, plan) if create_pr and plan.has_changes else None
    outcome = Outcome("unchanged", plan.repo_id, plan.revision, parent)
    attempts, pr_url, upload, staged = 0, None, None, None
    committer = Committer(
        api=api, notify=notify, wait=wait, max_attempts=max_attempts, batch_bytes=batch_bytes
    )
    if plan.has_changes and limits.exceeded_by(plan):
        with _before_landing(outcome):
            done = stage_and_merge(
                api,
                plan,
                parent,
                committer,
                limits=limits,
                message=message,
                create_pr=create_pr,
                notify=notify,
            )
        outcome, attempts, pr_url, staged = done.outcome, done.attempts, done.pr_url, done.report
        upload = UploadReport(*(sum(getattr(u, f.name) for u in done.uploads) for f in fields(UploadReport)))
    elif plan.has_changes:
        outcome, attempts, pr_url, upload = committer.commit(
            plan, outcome, message=message, create_pr=create_pr, prs_before=prs_before
        )
    with _after_landing(outcome, f"tagging it {tag!r}"):
        if tag is not None and create_tag:
            with hub_errors(plan.repo_id):
                api.create_tag(plan.repo_id, tag=tag, revision=outcome.commit, repo_type=plan.repo_type)
    report = None
    if verify:
        with _after_landing(outcome, "the remote verify"):
            report = verify_remote(
                plan.manifest, api, outcome.commit, manifest_path=plan.manifest_path, root=plan.root
            )
    return PushResult(outcome, attempts, pr_url, tag, report, created, upload, staged)


@contextlib.contextmanager
def _before_landing(outcome: Outcome) -> Iterator[None]:
    """A Hub failure before any upload: nothing was pushed (the outcome says the remote is unchanged)."""
    try:
        yield
    except HubError as exc:
        if exc.outcome is not None:  # raised knowing the outcome, its message says it
            raise
        raise with_outcome(exc, f"{exc.message}; nothing was pushed", outcome) from None


@contextlib.contextmanager
def _after_landing(outcome: Outcome, step: str) -> Iterator[None]:
    """Any failure once the commit is in place must say so: the release is published, only ``step`` failed.

    Hub errors keep their exit code; anything else (a bug, a local error) is reported the same
    way, as exit 3 for a bug, so a landed commit is never hidden behind a bare error.
    """
    try:
        yield
    except Exception as exc:
        assert outcome.commit is not None
        where = (
            outcome.clause() if outcome.landed else f"{outcome.repo_id} is unchanged at {outcome.commit[:12]}"
        )
        if isinstance(exc, HubReleaseError):
            detail, code = exc.message, exc.exit_code
        else:
            detail, code = f"{type(exc).__name__}: {exc}", 3
        raise StepFailedAfterLanding(
            f"{where}, but {step} failed: {detail}", exit_code=code, repo_id=outcome.repo_id, outcome=outcome
        ) from None
