"""A ``PushPlan`` -> exactly one commit on the Hub, or none.

One ``HfApi.create_commit`` carries every added, changed and deleted file, guarded by
``parent_commit`` = the head read when planning. That guard makes every retry safe: a commit that
already landed turns a retry into a 412 instead of a duplicate. Failure handling:

- 412: someone else pushed since planning -> ``RemoteMovedError``; nothing of ours landed. On a
  retry, a 412 whose new head holds exactly this release is our earlier attempt, landed late.
- 429: wait as the ``RateLimit``/``Retry-After`` headers say (the commit POST is not retried by
  huggingface_hub), telling the user through ``notify``, then retry with fresh operations.
- 5xx or a dropped connection: re-read the branch head. Moved to a commit that holds exactly this
  release -> ours landed; moved elsewhere -> someone else pushed (``RemoteMovedError``);
  unchanged -> it was lost; retry, and after ``max_attempts`` report that the remote is unchanged.
- ``--tag``: checked before uploading; a tag that already names another commit stops the push.

LFS blobs uploaded by a failed attempt stay in the Hub's content-addressed storage, so the next
attempt (or the next ``hubrelease push``) uploads only what is missing.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx2
from huggingface_hub import CommitInfo, CommitOperationAdd, CommitOperationDelete, HfApi
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.utils._http import parse_ratelimit_headers

from hubrelease.errors import HubError, RemoteMovedError
from hubrelease.hub.client import describe, http_status, hub_errors, to_hub_error
from hubrelease.hub.plan import PushPlan, read_remote
from hubrelease.hub.tree import resolve_commit, verify_remote
from hubrelease.verify import VerifyReport

Notify = Callable[[str], None]
DEFAULT_RATE_LIMIT_WAIT = 30


@dataclass(frozen=True)
class PushResult:
    """What happened: the commit now at the head (ours, or the unchanged parent), PR and tag, remote verify."""

    commit: str
    landed: bool
    attempts: int
    pr_url: str | None
    pr_revision: str | None
    tag: str | None
    report: VerifyReport | None

    def to_dict(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "landed": self.landed,
            "attempts": self.attempts,
            "pr_url": self.pr_url,
            "pr_revision": self.pr_revision,
            "tag": self.tag,
        }


def _operations(plan: PushPlan) -> list[CommitOperationAdd | CommitOperationDelete]:
    """Fresh operations for one attempt (huggingface_hub mutates and then refuses reused ones)."""
    adds: list[CommitOperationAdd | CommitOperationDelete] = [
        CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=str(f.local))
        for f in plan.with_status("added", "changed")
    ]
    return adds + [CommitOperationDelete(path_in_repo=f.path) for f in plan.deleted]


def rate_limit_wait(exc: BaseException) -> int:
    """Seconds to wait after a 429, from the IETF ``RateLimit`` header, else ``Retry-After``."""
    current: BaseException | None = exc
    while current is not None and not isinstance(current, HfHubHTTPError):
        current = current.__cause__
    if current is None or current.response is None:
        return DEFAULT_RATE_LIMIT_WAIT
    headers = current.response.headers
    info = parse_ratelimit_headers(headers)
    if info is not None and info.remaining == 0:
        return max(info.reset_in_seconds, 0)
    retry_after = headers.get("Retry-After", "")
    return int(retry_after) if retry_after.isdigit() else DEFAULT_RATE_LIMIT_WAIT


def _transient(exc: BaseException) -> bool:
    """5xx or a transport failure (possibly wrapped in huggingface_hub's RuntimeError for uploads)."""
    status = http_status(exc)
    if status is not None:
        return status >= 500
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, httpx2.TransportError | ConnectionError):
            return True
        current = current.__cause__
    return False


def _head(api: HfApi, plan: PushPlan) -> str:
    commit, _ = resolve_commit(api, plan.repo_id, plan.revision, plan.repo_type)
    return commit


def _pull_requests(api: HfApi, plan: PushPlan) -> dict[str, str]:
    with hub_errors(plan.repo_id):
        refs = api.list_repo_refs(plan.repo_id, repo_type=plan.repo_type, include_pull_requests=True)
    return {r.ref: r.target_commit for r in refs.pull_requests or []}


def _tag_is_free(api: HfApi, plan: PushPlan, tag: str, parent: str) -> bool:
    """Before uploading: True if ``tag`` must be created, False if it already names the unchanged head.

    A tag that exists elsewhere stops the push here; finding it only after the commit landed
    would leave a pushed release without its tag and a failed job.
    """
    with hub_errors(plan.repo_id):
        refs = api.list_repo_refs(plan.repo_id, repo_type=plan.repo_type)
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
    )


def push_release(
    api: HfApi,
    plan: PushPlan,
    *,
    message: str,
    create_pr: bool = False,
    tag: str | None = None,
    notify: Notify = lambda _: None,
    sleep: Callable[[float], None] = time.sleep,
    max_attempts: int = 3,
    verify: bool = True,
) -> PushResult:
    """Publish ``plan`` as one commit (see the module docstring for the failure rules)."""
    parent = plan.parent_commit
    if parent is None:
        with hub_errors(plan.repo_id):
            api.create_repo(plan.repo_id, repo_type=plan.repo_type, exist_ok=True)
        parent = _head(api, plan)
    commit, landed, attempts, pr_url, pr_revision = parent, False, 0, None, None
    create_tag = tag is not None and _tag_is_free(api, plan, tag, parent)
    if plan.has_changes:
        prs_before = _pull_requests(api, plan) if create_pr else None
        while True:
            attempts += 1
            try:
                info = _commit_or_raise(api, plan, parent, message, create_pr)
                commit, landed, pr_url, pr_revision = info.oid, True, info.pr_url, info.pr_revision
                break
            except RemoteMovedError:
                # A retry refused as stale may be refused by our own earlier attempt, which the
                # Hub finished after we had looked (a timed-out commit POST goes on server-side).
                late = None if attempts == 1 or create_pr else _head(api, plan)
                if late is None or not _holds(api, plan, late):
                    raise
                commit, landed = late, True
                notify(
                    f"an earlier attempt landed after all: {plan.repo_id}@{plan.revision} is at {late[:12]}"
                )
                break
            except _Attempt as failure:
                found = _recover(api, plan, parent, failure.error, prs_before, attempts, max_attempts)
                if found is not None:
                    (commit, pr_revision), landed = found, True
                    notify(
                        f"the Hub answered with an error ({describe(failure.error)}), but the commit landed"
                    )
                    break
                wait = rate_limit_wait(failure.error) if http_status(failure.error) == 429 else 0
                if http_status(failure.error) == 429:
                    notify(
                        f"rate limited by the Hub: waiting {wait}s before retrying (attempt {attempts + 1})"
                    )
                else:
                    notify(f"push attempt {attempts} was lost ({describe(failure.error)}); retrying")
                sleep(wait)
    if tag is not None and create_tag:
        with _after_landing(plan, commit, f"tagging it {tag!r}"), hub_errors(plan.repo_id):
            api.create_tag(plan.repo_id, tag=tag, revision=commit, repo_type=plan.repo_type)
    report = None
    if verify:
        with _after_landing(plan, commit, "the remote verify"):
            report = verify_remote(plan.manifest, api, commit, root=plan.root, known=[plan.manifest_name])
    return PushResult(commit, landed, attempts, pr_url, pr_revision, tag, report)


@contextlib.contextmanager
def _after_landing(plan: PushPlan, commit: str, step: str) -> Iterator[None]:
    """A Hub failure once the commit is in place must say so: the release is published, only ``step`` failed."""
    try:
        yield
    except HubError as exc:
        message = f"{commit} is on the Hub, but {step} failed: {exc.message}"
        raise HubError(message, repo_id=plan.repo_id, status=exc.status) from None


class _Attempt(Exception):
    """A failed attempt that may be retried (429, 5xx, transport); carries the original error."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def _commit_or_raise(api: HfApi, plan: PushPlan, parent: str, message: str, create_pr: bool) -> CommitInfo:
    """One ``create_commit``; 412 -> ``RemoteMovedError``, retryable failures -> ``_Attempt``."""
    try:
        return api.create_commit(
            plan.repo_id,
            _operations(plan),
            commit_message=message,
            repo_type=plan.repo_type,
            revision=plan.revision,
            parent_commit=parent,
            create_pr=create_pr,
        )
    except (HfHubHTTPError, httpx2.TransportError, RuntimeError) as exc:
        status = http_status(exc)
        if status == 412:
            raise RemoteMovedError(
                f"{plan.repo_id}@{plan.revision} moved since the push was planned on {parent[:12]}: "
                "someone else pushed; nothing of this push landed; re-run push to plan again",
                repo_id=plan.repo_id,
                status=412,
            ) from None
        if status == 429 or _transient(exc):
            raise _Attempt(exc) from None
        raise to_hub_error(exc, plan.repo_id, plan.revision) from None


def _recover(
    api: HfApi,
    plan: PushPlan,
    parent: str,
    error: BaseException,
    prs_before: dict[str, str] | None,
    attempts: int,
    max_attempts: int,
) -> tuple[str, str | None] | None:
    """Landed anyway -> (commit, PR ref); lost with attempts left -> None; else raise ``HubError``."""
    found = None if http_status(error) == 429 else _landed(api, plan, parent, prs_before)
    if found is None and attempts >= max_attempts:
        raise HubError(
            f"{plan.repo_id}: push did not land after {attempts} attempt(s) ({describe(error)}); "
            f"the remote is unchanged at {parent[:12]}; re-run push: uploaded files are not sent again",
            repo_id=plan.repo_id,
            status=http_status(error),
        )
    return found


def _landed(
    api: HfApi, plan: PushPlan, parent: str, prs_before: dict[str, str] | None
) -> tuple[str, str | None] | None:
    """After a 5xx or a dropped connection: (commit, PR ref) if the attempt landed anyway, None if lost.

    A new head (or PR) counts as ours only if it holds exactly this release: while a lost attempt
    was uploading, someone else may have pushed, and their commit must not be reported, tagged or
    verified as this push.
    """
    if prs_before is not None:
        prs = _pull_requests(api, plan)
        new = [ref for ref in sorted(set(prs) - set(prs_before)) if _holds(api, plan, prs[ref])]
        return (prs[new[-1]], new[-1]) if new else None
    head = _head(api, plan)
    if head == parent:
        return None
    if not _holds(api, plan, head):
        raise RemoteMovedError(
            f"{plan.repo_id}@{plan.revision} moved to {head[:12]} while this push was retrying, and that "
            "commit is not this release: someone else pushed; re-run push to plan again",
            repo_id=plan.repo_id,
            status=412,
        )
    return head, None


def _holds(api: HfApi, plan: PushPlan, commit: str) -> bool:
    return plan.held_by(read_remote(api, plan.manifest, commit))
