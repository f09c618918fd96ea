"""A ``PushPlan`` -> data uploaded batch by batch, then exactly one commit on the Hub, or none.

A release larger than one commit carries (``plan.CommitLimits``) is staged on a pull request in
several such commits and lands on the branch as one merge commit (``stage.py``).

Upload: the files to add go up in batches (``batches.py``: a large file alone, small ones grouped),
one ``preupload_lfs_files`` call each, so the Hub registers each batch's data as it completes and a
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
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from urllib.parse import quote

import httpx2
from huggingface_hub import (
    CommitInfo,
    CommitOperationAdd,
    CommitOperationDelete,
    HfApi,
    get_session,
    hf_raise_for_status,
)
from huggingface_hub.errors import BadRequestError, HfHubHTTPError, OIDCError
from huggingface_hub.lfs import post_lfs_batch_info
from huggingface_hub.utils import build_hf_headers

from hubrelease.errors import (
    CheckFailed,
    HubError,
    HubReleaseError,
    HubUnavailable,
    InputError,
    MetadataRefused,
    RemoteMovedError,
    StepFailedAfterLanding,
    with_outcome,
)
from hubrelease.findings import VerifyReport
from hubrelease.fsutil import descriptor_path, open_regular
from hubrelease.hashing import StatKey
from hubrelease.hub import client
from hubrelease.hub.batches import DEFAULT_BATCH_BYTES, Batch, batches
from hubrelease.hub.client import (
    MAX_RATE_LIMIT_WAIT,
    describe,
    http_status,
    hub_errors,
    is_transport_failure,
    metadata,
    rate_limit_wait,
    to_hub_error,
)
from hubrelease.hub.metadata import repo_info, resolve_commit
from hubrelease.hub.plan import CommitLimits, PlannedFile, PushPlan, read_remote
from hubrelease.hub.remote_verify import verify_remote
from hubrelease.hub.stage import CommitPart, StageReport, stage_and_merge
from hubrelease.outcome import Outcome

Notify = Callable[[str], None]
Operation = CommitOperationAdd | CommitOperationDelete
MAX_CONFLICT_WAIT = 30
# hf_xet's own retries of one request (xet_runtime config group "client"): 5 tries 3 s to 6 min
# apart by default, measured at 232 s to give up on a xorb whose connection drops every time.
XET_RETRY_DEFAULTS = {
    "HF_XET_CLIENT_RETRY_MAX_ATTEMPTS": "3",
    "HF_XET_CLIENT_RETRY_BASE_DELAY": "1s",
    "HF_XET_CLIENT_RETRY_MAX_DURATION": "4s",
}
# Refusals the Hub answers before acting on a commit: nothing of it landed.
REFUSED_BEFORE_ACTING = {400, 401, 403, 409, 412, 413, 422, 429}


@dataclass(frozen=True)
class UploadReport:
    """What the upload stage did: batches, files and bytes to upload, and what the Hub held already."""

    batches: int
    files: int
    bytes: int
    stored_files: int
    """Files whose content the Hub already stored when the push started (the LFS batch answer)."""
    stored_bytes: int
    retried_batches: int = 0

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


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


Opened = dict[str, int]
"""Repo path -> descriptor of the planned file (``_opened``)."""


@contextlib.contextmanager
def _opened(plan: PushPlan) -> Iterator[Opened]:
    """Every file to upload, opened without following symlinks and checked to be the planned file."""
    uploads = plan.with_status("added", "changed")
    _allow_open_files(len(uploads))
    opened: Opened = {}
    try:
        for f in uploads:
            try:
                opened[f.path] = open_regular(f.local)
            except OSError as exc:
                raise _changed(
                    f.path, f.local, f"cannot be opened as a regular file ({exc.strerror})"
                ) from None
        check_unchanged(uploads, opened)
        yield opened
    finally:
        for fd in opened.values():
            os.close(fd)


def _allow_open_files(count: int) -> None:
    """Raise the soft limit on open files so ``count`` uploads can be held open (up to the hard limit)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = count + 256  # the HTTP and Xet clients' own descriptors
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(
            resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard)
        )


def _changed(path: str, local: Path, what: str) -> CheckFailed:
    return CheckFailed(
        f"{path}: {what} since its sha256 was checked against the manifest; nothing was committed; "
        "run `hubrelease verify`, then push again",
        path=local,
    )


def _operations(plan: PushPlan, opened: Opened) -> tuple[list[CommitOperationAdd], list[Operation]]:
    """(additions, all operations), built once: each addition reads its opened file and carries the
    digest the plan has.

    ``CommitOperationAdd`` reads only a 512-byte sample; setting ``upload_info.sha256`` is what
    huggingface_hub checks (``UploadInfo.is_hashed``) before hashing a file for the LFS batch or
    asking hf_xet to compute it (``_commit_api._upload_xet_files``).
    """
    adds = []
    for f in plan.with_status("added", "changed"):
        op = CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=descriptor_path(opened[f.path], f.local))
        op.upload_info.sha256 = bytes.fromhex(f.sha256)
        adds.append(op)
    deletes = [CommitOperationDelete(path_in_repo=f.path) for f in plan.deleted]
    return adds, [*adds, *deletes]


def check_unchanged(files: Sequence[PlannedFile], opened: Opened) -> None:
    """Every file to upload, open and by name (not following a symlink), still has the stat its
    digest was taken at (else nothing is committed)."""
    for f in files:
        try:
            by_name: StatKey | None = StatKey.of(os.lstat(f.local))
        except OSError:
            by_name = None
        if f.stat is not None and not f.stat == by_name == StatKey.of(os.fstat(opened[f.path])):
            raise _changed(f.path, f.local, "changed on disk")


def _head(api: HfApi, plan: PushPlan) -> str:
    return resolve_commit(api, plan.repo_id, plan.revision, plan.repo_type)


def _pull_requests(api: HfApi, plan: PushPlan) -> dict[str, str]:
    refs = metadata(
        plan.repo_id,
        None,
        lambda: api.list_repo_refs(plan.repo_id, repo_type=plan.repo_type, include_pull_requests=True),
    )
    return {r.ref: r.target_commit for r in refs.pull_requests or []}


def _tag_is_free(api: HfApi, plan: PushPlan, tag: str, parent: str) -> bool:
    """Before uploading: True if ``tag`` must be created, False if it already names the unchanged head.

    A tag that exists elsewhere stops the push here; finding it only after the commit landed
    would leave a pushed release without its tag and a failed job.
    """
    refs = metadata(plan.repo_id, None, lambda: api.list_repo_refs(plan.repo_id, repo_type=plan.repo_type))
    existing = {r.name: r.target_commit for r in refs.tags}.get(tag)
    if existing is None:
        return True
    if existing == parent and not plan.has_changes:
        return False
    raise HubError(
        f"{plan.repo_id}: tag {tag!r} already exists on {existing[:12]}; nothing was pushed; "
        "choose another tag or delete that one",
        repo_id=plan.repo_id,
        status=409,
        outcome=Outcome("unchanged", plan.repo_id, plan.revision, parent),
    )


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


def bound_xet_retries() -> None:
    """hf_xet's per-request retries, bounded as ``XET_RETRY_DEFAULTS`` unless the user set them.

    Read by hf_xet when huggingface_hub opens its session (the first Xet upload of the process).
    """
    for name, value in XET_RETRY_DEFAULTS.items():
        os.environ.setdefault(name, value)


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
        create_tag = tag is not None and _tag_is_free(api, plan, tag, parent)
        prs_before = _pull_requests(api, plan) if create_pr and plan.has_changes else None
    outcome = Outcome("unchanged", plan.repo_id, plan.revision, parent)
    attempts, pr_url, upload, staged = 0, None, None, None
    if plan.has_changes and limits.exceeded_by(plan):
        committer = _part_committer(api, notify, wait, max_attempts, batch_bytes)
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
        with _opened(plan) as opened:
            outcome, attempts, pr_url, upload = _upload_and_commit(
                api,
                plan,
                opened,
                outcome,
                message,
                create_pr=create_pr,
                prs_before=prs_before,
                notify=notify,
                wait=wait,
                max_attempts=max_attempts,
                batch_bytes=batch_bytes,
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


def _part_committer(
    api: HfApi, notify: Notify, wait: Callable[[float], None], max_attempts: int, batch_bytes: int
) -> CommitPart[UploadReport]:
    """One staged part up and committed as a push is (``_upload_and_commit``), on its own files."""

    def commit(
        part: PushPlan, unchanged: Outcome, message: str, create_pr: bool
    ) -> tuple[Outcome, int, str | None, UploadReport]:
        prs_before = _pull_requests(api, part) if create_pr else None
        with _opened(part) as opened:
            return _upload_and_commit(
                api,
                part,
                opened,
                unchanged,
                message,
                create_pr=create_pr,
                prs_before=prs_before,
                notify=notify,
                wait=wait,
                max_attempts=max_attempts,
                batch_bytes=batch_bytes,
            )

    return commit


def _upload_and_commit(
    api: HfApi,
    plan: PushPlan,
    opened: Opened,
    outcome: Outcome,
    message: str,
    *,
    create_pr: bool,
    prs_before: dict[str, str] | None,
    notify: Notify,
    wait: Callable[[float], None],
    max_attempts: int,
    batch_bytes: int,
) -> tuple[Outcome, int, str | None, UploadReport]:
    """The batches up, then the commit attempts: (outcome, commit attempts, PR URL, upload report)."""
    files = plan.with_status("added", "changed")
    additions, operations = _operations(plan, opened)
    bound_xet_retries()
    upload = _upload(
        api,
        plan,
        opened,
        additions,
        outcome,
        create_pr=create_pr,
        notify=notify,
        wait=wait,
        max_attempts=max_attempts,
        batch_bytes=batch_bytes,
    )
    check_unchanged(files, opened)  # the uploaded bytes are the pinned ones only if nothing changed meanwhile
    attempts, pr_url = 0, None
    while True:
        attempts += 1
        try:
            info = _commit_or_raise(
                api, plan, opened, operations, outcome, message=message, create_pr=create_pr
            )
            ref = info.pr_revision or plan.revision
            outcome, pr_url = Outcome("landed", plan.repo_id, ref, info.oid), info.pr_url
            break
        except RemoteMovedError:
            # A retry refused as stale may be refused by our own earlier attempt, which the
            # Hub finished after we had looked (a timed-out commit POST goes on server-side).
            late = None if attempts == 1 or create_pr else _late_landing(api, plan)
            if late is None:
                raise
            outcome = Outcome("landed", plan.repo_id, plan.revision, late)
            notify(f"an earlier attempt landed after all: {plan.repo_id}@{plan.revision} is at {late[:12]}")
            break
        except _Attempt as failure:
            found = _recover(
                api, plan, outcome, failure, prs_before, attempts=attempts, max_attempts=max_attempts
            )
            if found is not None:
                outcome = found
                notify(
                    f"the Hub answered with an error ({describe(failure.error)}), but the commit landed "
                    f"at {plan.repo_id}@{found.ref}"
                )
                break
            notify(failure.retry_notice(f"commit attempt {attempts}", attempts, max_attempts))
            wait(failure.wait)
    return outcome, attempts, pr_url, upload


def _late_landing(api: HfApi, plan: PushPlan) -> str | None:
    """After a retry was refused as stale: the head, if it holds exactly this release (ours, late)."""
    try:
        late = _head(api, plan)
        return late if _holds(api, plan, late) else None
    except HubError as exc:
        raise HubUnavailable(
            f"{plan.repo_id}: a retry was refused as stale (HTTP 412) and the Hub could not be read back "
            f"({exc.message}); whether an earlier attempt landed is unknown: run `hubrelease verify --remote`",
            repo_id=plan.repo_id,
            outcome=Outcome("unknown", plan.repo_id, plan.revision, None),
        ) from None


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


class _Attempt(Exception):
    """A failed attempt that may be retried; carries the original error and how long to wait."""

    def __init__(self, error: BaseException, kind: str, wait: float = 0) -> None:
        super().__init__(str(error))
        self.error = error
        self.kind = kind
        self.wait = wait

    def retry_notice(self, what: str, attempts: int, max_attempts: int) -> str:
        nxt = f"attempt {attempts + 1} of {max_attempts}"
        if self.kind == "rate_limit":
            return f"rate limited by the Hub: waiting {self.wait:g}s as it asks before retrying ({nxt})"
        if self.kind == "conflict":
            return (
                f"the Hub is landing another commit on this repo ({describe(self.error)}): waiting "
                f"{self.wait:g}s before retrying ({nxt})"
            )
        return f"{what} was lost ({describe(self.error)}); retrying ({nxt})"


def _stored(api: HfApi, plan: PushPlan, additions: list[CommitOperationAdd], create_pr: bool) -> set[str]:
    """Paths whose content the Hub already stores, from the git-lfs batch API (objects answered
    without upload actions). For progress only: hf_xet and huggingface_hub decide what is sent
    themselves, so a probe that fails says nothing is stored."""
    stored: set[str] = set()
    by_oid = {op.upload_info.sha256.hex(): op.path_in_repo for op in additions}
    try:
        for first in range(0, len(additions), 256):  # huggingface_hub's UPLOAD_BATCH_MAX_NUM_FILES
            actions, _, _ = post_lfs_batch_info(
                upload_infos=[op.upload_info for op in additions[first : first + 256]],
                token=None,
                repo_type=plan.repo_type,
                repo_id=plan.repo_id,
                revision=None if create_pr else plan.revision,
                endpoint=api.endpoint,
                headers=build_hf_headers(token=api.token),
            )
            stored.update(
                by_oid[a["oid"]] for a in actions if a.get("actions") is None and a["oid"] in by_oid
            )
    except (HfHubHTTPError, httpx2.TransportError, OSError, ValueError, KeyError):
        return set()
    return stored


def _upload(
    api: HfApi,
    plan: PushPlan,
    opened: Opened,
    additions: list[CommitOperationAdd],
    unchanged: Outcome,
    *,
    create_pr: bool,
    notify: Notify,
    wait: Callable[[float], None],
    max_attempts: int,
    batch_bytes: int,
) -> UploadReport:
    """Every batch uploaded (registered on the Hub), or the error that stopped it: nothing landed."""
    files = plan.with_status("added", "changed")
    ops = {op.path_in_repo: op for op in additions}
    groups = batches(files, batch_bytes)
    stored = _stored(api, plan, additions, create_pr)
    held = [f for f in files if f.path in stored]
    total = sum(f.size for f in files)
    notify(
        f"upload: {len(files)} file(s), {total:,} bytes in {len(groups)} batch(es); the Hub holds "
        f"{len(held)} of them ({sum(f.size for f in held):,} bytes) already"
    )
    retried = 0
    for number, batch in enumerate(groups, 1):
        label = f"batch {number}/{len(groups)}"
        have = [f for f in batch.files if f.path in stored]
        notify(
            f"{label}: {len(batch.files)} file(s), {batch.size:,} bytes"
            + (f", {sum(f.size for f in have):,} of them already on the Hub" if have else "")
        )
        tries = _upload_batch(
            api,
            plan,
            opened,
            batch,
            ops,
            unchanged=unchanged,
            create_pr=create_pr,
            label=label,
            notify=notify,
            wait=wait,
            max_attempts=max_attempts,
        )
        retried += tries > 1
    return UploadReport(
        len(groups), len(files), total, len(held), sum(f.size for f in held), retried_batches=retried
    )


def _upload_batch(
    api: HfApi,
    plan: PushPlan,
    opened: Opened,
    batch: Batch,
    ops: dict[str, CommitOperationAdd],
    *,
    unchanged: Outcome,
    create_pr: bool,
    label: str,
    notify: Notify,
    wait: Callable[[float], None],
    max_attempts: int,
) -> int:
    """One batch up, retried alone after a lost attempt; returns the attempts it took."""
    attempts = 0
    while True:
        attempts += 1
        check_unchanged(batch.files, opened)
        try:
            api.preupload_lfs_files(
                plan.repo_id,
                [ops[f.path] for f in batch.files],
                repo_type=plan.repo_type,
                revision=plan.revision,
                create_pr=create_pr,
            )
            return attempts
        except HubReleaseError:
            raise
        except Exception as exc:
            failure = _classify(exc, plan, unchanged, uploading=True)
            if not isinstance(failure, _Attempt):
                raise failure from None
            _xet_refusal(api, plan, exc, unchanged, create_pr)
        if failure.kind == "lost":
            failure.wait = min(2**attempts, MAX_CONFLICT_WAIT)
        if attempts >= max_attempts or failure.wait > MAX_RATE_LIMIT_WAIT:
            raise _gave_up(plan, f"{label} did not upload", failure, attempts, unchanged)
        notify(failure.retry_notice(f"upload of {label}", attempts, max_attempts))
        wait(failure.wait)


def _xet_refusal(api: HfApi, plan: PushPlan, exc: Exception, unchanged: Outcome, create_pr: bool) -> None:
    """After a Xet-stage failure (no HTTP status: hf_xet raises a bare ``ConnectionError`` even for a
    401/403 on the token route), ask that route again; a refusal stops the push at once.

    The route and query are huggingface_hub's (``utils/_xet.py`` ``xet_connection_info_refresh_url``).
    """
    if http_status(exc) is not None:
        return
    url = (
        f"{api.endpoint}/api/{plan.repo_type}s/{plan.repo_id}/xet-write-token/{quote(plan.revision, safe='')}"
    )
    try:
        response = get_session().get(
            url + ("?create_pr=1" if create_pr else ""), headers=build_hf_headers(token=api.token)
        )
        hf_raise_for_status(response)
    except HfHubHTTPError as refused:
        if http_status(refused) in (401, 403):
            error = to_hub_error(refused, plan.repo_id, plan.revision)
            raise with_outcome(
                error, f"{error.message} (Xet write token); {unchanged.clause()}", unchanged
            ) from None
    except (httpx2.TransportError, OSError):
        return


def _gave_up(
    plan: PushPlan, what: str, failure: _Attempt, attempts: int, unchanged: Outcome
) -> HubUnavailable:
    """The one line after the last attempt: the attempts made, the wait the Hub asked for, the outcome."""
    cause = describe(failure.error)
    if failure.kind == "rate_limit" and failure.wait > MAX_RATE_LIMIT_WAIT:
        cause += f"; the Hub asks to wait {failure.wait:g}s, over the {MAX_RATE_LIMIT_WAIT}s push waits"
    return HubUnavailable(
        f"{plan.repo_id}: {what} after {attempts} attempt(s) ({cause}); {unchanged.clause()}; re-run push: "
        "what the Hub holds already is not sent again",
        repo_id=plan.repo_id,
        status=http_status(failure.error),
        outcome=unchanged,
    )


def _commit_or_raise(
    api: HfApi,
    plan: PushPlan,
    opened: Opened,
    operations: list[Operation],
    unchanged: Outcome,
    *,
    message: str,
    create_pr: bool,
) -> CommitInfo:
    """One commit attempt (the data is uploaded). Retryable failures -> ``_Attempt``."""
    check_unchanged(plan.with_status("added", "changed"), opened)
    try:
        return api.create_commit(
            plan.repo_id,
            operations,
            commit_message=message,
            repo_type=plan.repo_type,
            revision=plan.revision,
            parent_commit=unchanged.commit,
            create_pr=create_pr,
        )
    except HubReleaseError:
        raise
    except Exception as exc:
        raise _classify(exc, plan, unchanged, uploading=False) from None


def _classify(exc: Exception, plan: PushPlan, unchanged: Outcome, *, uploading: bool) -> Exception:
    """What one failed attempt means: retry (``_Attempt``), or the one-line error to stop with.

    While ``uploading`` nothing can have landed; during the commit only a refusal the Hub answers
    before acting (``REFUSED_BEFORE_ACTING``) proves it, anything else is read back.
    """
    status = http_status(exc)
    if status == 412:
        assert unchanged.commit is not None
        return RemoteMovedError(
            f"{plan.repo_id}@{plan.revision} moved since the push was planned on {unchanged.commit[:12]}: "
            "someone else pushed; nothing of this push landed; re-run push to plan again",
            repo_id=plan.repo_id,
            status=412,
            outcome=unchanged,
        )
    if status == 429:
        return _Attempt(exc, "rate_limit", rate_limit_wait(exc))
    if status == 409:
        return _Attempt(exc, "conflict")
    if status is not None and (status >= 500 or (not uploading and status not in REFUSED_BEFORE_ACTING)):
        return _Attempt(exc, "lost")
    if isinstance(exc, ValueError) and isinstance(exc.__cause__, BadRequestError):
        # validate-yaml 400: huggingface_hub raises ValueError("Invalid metadata in README.md...")
        # from BadRequestError (hf_api.HfApi._validate_yaml).
        detail = "; ".join(line.lstrip("- ") for line in str(exc).splitlines()[1:] if line.strip())
        return MetadataRefused(
            f"{plan.repo_id}: the Hub refused README.md's metadata: {detail or describe(exc)}; {unchanged.clause()}",
            repo_id=plan.repo_id,
            status=400,
            path="README.md",
            outcome=unchanged,
        )
    if isinstance(exc, json.JSONDecodeError):
        return _Attempt(exc, "lost")  # an HTML error page (a 502 from the proxy) where JSON was due
    if status is None and isinstance(exc, OSError) and exc.filename is not None:
        local = {str(f.local) for f in plan.files}
        if str(exc.filename) in local or os.path.abspath(str(exc.filename)) in local:
            return InputError(f"{exc.filename}: {exc.strerror or exc} while pushing; {unchanged.clause()}")
    if client.xet_auth_failure(exc):
        return HubUnavailable(
            f"{plan.repo_id}: Xet storage refused the write token ({exc}); {unchanged.clause()}",
            repo_id=plan.repo_id,
            outcome=unchanged,
        )
    if status is None and (is_transport_failure(exc) or isinstance(exc, OSError | RuntimeError)):
        return _Attempt(exc, "lost")  # hf_xet raises built-in ConnectionError/OSError/RuntimeError
    if status is not None or isinstance(exc, httpx2.TransportError | HfHubHTTPError | OIDCError):
        error = to_hub_error(exc, plan.repo_id, plan.revision)
        return with_outcome(error, f"{error.message}; {unchanged.clause()}", unchanged)
    if uploading and isinstance(exc, ValueError):
        # huggingface_hub's upload raises ValueError for what the Hub answered: the LFS batch's
        # per-object errors, a malformed preupload or batch answer (_commit_api, lfs.py).
        return HubUnavailable(
            f"{plan.repo_id}: the Hub refused the upload: {describe(exc)}; {unchanged.clause()}",
            repo_id=plan.repo_id,
            outcome=unchanged,
        )
    return exc


def _recover(
    api: HfApi,
    plan: PushPlan,
    unchanged: Outcome,
    failure: _Attempt,
    prs_before: dict[str, str] | None,
    *,
    attempts: int,
    max_attempts: int,
) -> Outcome | None:
    """Landed anyway -> its outcome; lost with attempts left -> None; else raise ``HubUnavailable``."""
    found = None if failure.kind != "lost" else _read_back(api, plan, unchanged, failure, prs_before)
    if failure.kind == "conflict":
        failure.wait = min(2**attempts, MAX_CONFLICT_WAIT)
    if found is None and (attempts >= max_attempts or failure.wait > MAX_RATE_LIMIT_WAIT):
        raise _gave_up(plan, "push did not land", failure, attempts, unchanged)
    return found


def _read_back(
    api: HfApi, plan: PushPlan, unchanged: Outcome, failure: _Attempt, prs_before: dict[str, str] | None
) -> Outcome | None:
    """``_landed``, except that a Hub that cannot even be read back makes the outcome unknown.

    Never a bare HTTP error here: the attempt may have landed, and the line must say so.
    """
    try:
        return _landed(api, plan, unchanged, prs_before)
    except RemoteMovedError:
        raise
    except HubError as exc:
        unknown = Outcome("unknown", plan.repo_id, None if prs_before is not None else plan.revision, None)
        raise HubUnavailable(
            f"{plan.repo_id}: a push attempt failed ({describe(failure.error)}) and the Hub could not be "
            f"read back ({exc.message}); {unknown.clause()}",
            repo_id=plan.repo_id,
            outcome=unknown,
        ) from None


def _landed(
    api: HfApi, plan: PushPlan, unchanged: Outcome, prs_before: dict[str, str] | None
) -> Outcome | None:
    """After a 5xx or a dropped connection: the outcome if the attempt landed anyway, None if lost.

    A new head (or PR) counts as ours only if it holds exactly this release: while a lost attempt
    was uploading, someone else may have pushed, and their commit must not be reported, tagged or
    verified as this push.
    """
    if prs_before is not None:
        prs = _pull_requests(api, plan)
        new = [ref for ref in sorted(set(prs) - set(prs_before)) if _holds(api, plan, prs[ref])]
        return Outcome("landed", plan.repo_id, new[-1], prs[new[-1]]) if new else None
    head = _head(api, plan)
    if head == unchanged.commit:
        return None
    if not _holds(api, plan, head):
        raise RemoteMovedError(
            f"{plan.repo_id}@{plan.revision} moved to {head[:12]} while this push was retrying, and that "
            "commit is not this release: someone else pushed; re-run push to plan again",
            repo_id=plan.repo_id,
            status=412,
            outcome=unchanged,
        )
    return Outcome("landed", plan.repo_id, plan.revision, head)


def _holds(api: HfApi, plan: PushPlan, commit: str) -> bool:
    return plan.held_by(read_remote(api, plan.manifest, commit))
