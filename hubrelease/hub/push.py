"""A ``PushPlan`` -> exactly one commit on the Hub, or none.

One ``HfApi.create_commit`` carries every added, changed and deleted file, guarded by
``parent_commit`` = the head read when planning. That guard makes every retry safe: a commit that
already landed turns a retry into a 412 instead of a duplicate. The operations are built once,
with the sha256 the plan already has (``UploadInfo.sha256``, so neither the LFS path nor hf_xet
hashes the file again), and reused by every attempt: huggingface_hub refuses only operations that
were committed. Every file to upload is opened once, before any byte is sent, without following a
symlink (``fsutil.open_regular``), and must be the file its digest was taken from (same inode,
size, mtimes); the uploads read that open file (``/proc/self/fd/N``), so a file swapped for a
symlink to the token file meanwhile sends nothing of it. Before the upload and again before the
commit, the open file and the name must both still have that stat, so only the pinned bytes land.
Failure handling, each ending in one line that says whether anything landed:

- 412: someone else pushed since planning -> ``RemoteMovedError`` (exit 1: re-run to plan again);
  nothing of ours landed. On a retry, a 412 whose new head holds exactly this release is our
  earlier attempt, landed late. With ``create_pr`` the Hub opens the PR from ``parent_commit``
  and never answers 412.
- 429: wait as the ``RateLimit``/``Retry-After`` headers say (bounded), then retry; 409 ("another
  commit in progress"): back off and retry.
- 5xx, a dropped connection, a non-JSON answer, an hf_xet failure (built-in ``ConnectionError``,
  ``TimeoutError``, ``RuntimeError``...): re-read the branch head. Moved to a commit that holds
  exactly this release -> ours landed; moved elsewhere -> someone else pushed; unchanged -> it was
  lost; retry, and after ``max_attempts`` ``HubUnavailable`` (exit 4) says the remote is unchanged.
- 401/403, an hf_xet ``XetAuthenticationError``, another refusal: ``HubUnavailable`` at once.
- validate-yaml 400 (the Hub refuses README.md's metadata): ``InputError`` (exit 2).
- ``--tag``: checked before uploading; a tag that already names another commit stops the push.
- After the commit landed, any failure (tag, remote verify) says the commit is on the Hub.

LFS blobs and Xet chunks uploaded by a failed attempt stay in the Hub's content-addressed storage,
so the next attempt (or the next ``hubrelease push``) uploads only what is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
from huggingface_hub import CommitInfo, CommitOperationAdd, CommitOperationDelete, HfApi
from huggingface_hub.errors import BadRequestError, HfHubHTTPError, OIDCError

from hubrelease.errors import (
    CheckFailed,
    HubError,
    HubReleaseError,
    HubUnavailable,
    InputError,
    RemoteMovedError,
)
from hubrelease.fsutil import descriptor_path, open_regular
from hubrelease.hashing import StatKey
from hubrelease.hub import client
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
from hubrelease.hub.plan import PushPlan, read_remote
from hubrelease.hub.tree import repo_info, resolve_commit, verify_remote
from hubrelease.verify import VerifyReport

Notify = Callable[[str], None]
Operation = CommitOperationAdd | CommitOperationDelete
MAX_CONFLICT_WAIT = 30


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
    created: str | None = None
    """``'private'``/``'public'`` when this push created the repo, else None."""

    def to_dict(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "landed": self.landed,
            "attempts": self.attempts,
            "pr_url": self.pr_url,
            "pr_revision": self.pr_revision,
            "tag": self.tag,
            "created": self.created,
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
        check_unchanged(plan, opened)
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


def check_unchanged(plan: PushPlan, opened: Opened) -> None:
    """Every file to upload, open and by name (not following a symlink), still has the stat its
    digest was taken at (else nothing is committed)."""
    for f in plan.with_status("added", "changed"):
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
) -> PushResult:
    """Publish ``plan`` as one commit (see the module docstring for the failure rules).

    ``private`` is the visibility the release asks for (None: whatever the Hub decides / has).
    """
    wait = sleep or client.sleep
    with _before_landing():
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
    commit, landed, attempts, pr_url, pr_revision = parent, False, 0, None, None
    if plan.has_changes:
        with _opened(plan) as opened:
            additions, operations = _operations(plan, opened)
            while True:
                attempts += 1
                try:
                    info = _commit_or_raise(
                        api, plan, opened, additions, operations, parent, message, create_pr
                    )
                    commit, landed, pr_url, pr_revision = info.oid, True, info.pr_url, info.pr_revision
                    break
                except RemoteMovedError:
                    # A retry refused as stale may be refused by our own earlier attempt, which the
                    # Hub finished after we had looked (a timed-out commit POST goes on server-side).
                    try:
                        late = None if attempts == 1 or create_pr else _head(api, plan)
                        ours = late is not None and _holds(api, plan, late)
                    except HubError as exc:
                        raise HubUnavailable(
                            f"{plan.repo_id}: a retry was refused as stale (HTTP 412) and the Hub could not be "
                            f"read back ({exc.message}); whether an earlier attempt landed is unknown: run "
                            "`hubrelease verify --remote`",
                            repo_id=plan.repo_id,
                        ) from None
                    if late is None or not ours:
                        raise
                    commit, landed = late, True
                    notify(
                        f"an earlier attempt landed after all: {plan.repo_id}@{plan.revision} is at {late[:12]}"
                    )
                    break
                except _Attempt as failure:
                    found = _recover(api, plan, parent, failure, prs_before, attempts, max_attempts)
                    if found is not None:
                        (commit, pr_revision), landed = found, True
                        notify(
                            f"the Hub answered with an error ({describe(failure.error)}), but the commit landed"
                        )
                        break
                    notify(failure.retry_notice(attempts))
                    wait(failure.wait)
    with _after_landing(plan, commit, landed, f"tagging it {tag!r}"):
        if tag is not None and create_tag:
            with hub_errors(plan.repo_id):
                api.create_tag(plan.repo_id, tag=tag, revision=commit, repo_type=plan.repo_type)
    report = None
    if verify:
        with _after_landing(plan, commit, landed, "the remote verify"):
            report = verify_remote(
                plan.manifest, api, commit, manifest_path=plan.manifest_path, root=plan.root
            )
    return PushResult(commit, landed, attempts, pr_url, pr_revision, tag, report, created)


@contextlib.contextmanager
def _before_landing() -> Iterator[None]:
    """A Hub failure before any upload says that nothing was pushed."""
    try:
        yield
    except HubError as exc:
        if "nothing" not in exc.message:
            exc.message += "; nothing was pushed"
        raise


@contextlib.contextmanager
def _after_landing(plan: PushPlan, commit: str, landed: bool, step: str) -> Iterator[None]:
    """Any failure once the commit is in place must say so: the release is published, only ``step`` failed.

    Hub errors keep their exit code; anything else (a bug, a local error) is reported the same
    way, as exit 3 for a bug, so a landed commit is never hidden behind a bare error.
    """
    try:
        yield
    except Exception as exc:
        where = f"{commit} is on the Hub" if landed else f"{plan.repo_id} is unchanged at {commit[:12]}"
        if isinstance(exc, HubReleaseError):
            error = HubError(f"{where}, but {step} failed: {exc.message}", repo_id=plan.repo_id)
            error.exit_code = exc.exit_code
        else:
            error = HubError(f"{where}, but {step} failed: {type(exc).__name__}: {exc}", repo_id=plan.repo_id)
            error.exit_code = 3
        raise error from None


class _Attempt(Exception):
    """A failed attempt that may be retried; carries the original error and how long to wait."""

    def __init__(self, error: BaseException, kind: str, wait: float = 0) -> None:
        super().__init__(str(error))
        self.error = error
        self.kind = kind
        self.wait = wait

    def retry_notice(self, attempts: int) -> str:
        if self.kind == "rate_limit":
            return f"rate limited by the Hub: waiting {self.wait:g}s before retrying (attempt {attempts + 1})"
        if self.kind == "conflict":
            return (
                f"the Hub is landing another commit on this repo ({describe(self.error)}): waiting "
                f"{self.wait:g}s before retrying (attempt {attempts + 1})"
            )
        return f"push attempt {attempts} was lost ({describe(self.error)}); retrying"


def _commit_or_raise(
    api: HfApi,
    plan: PushPlan,
    opened: Opened,
    additions: list[CommitOperationAdd],
    operations: list[Operation],
    parent: str,
    message: str,
    create_pr: bool,
) -> CommitInfo:
    """One attempt: stat check, upload, stat check, commit. Retryable failures -> ``_Attempt``."""
    check_unchanged(plan, opened)
    try:
        api.preupload_lfs_files(
            plan.repo_id, additions, repo_type=plan.repo_type, revision=plan.revision, create_pr=create_pr
        )
        check_unchanged(
            plan, opened
        )  # the uploaded bytes are the pinned ones only if nothing changed meanwhile
        return api.create_commit(
            plan.repo_id,
            operations,
            commit_message=message,
            repo_type=plan.repo_type,
            revision=plan.revision,
            parent_commit=parent,
            create_pr=create_pr,
        )
    except HubReleaseError:
        raise
    except Exception as exc:
        raise _classify(exc, plan, parent) from None


def _classify(exc: Exception, plan: PushPlan, parent: str) -> Exception:
    """What one failed attempt means: retry (``_Attempt``), or the one-line error to stop with."""
    status = http_status(exc)
    unchanged = f"nothing landed: {plan.repo_id}@{plan.revision} is unchanged at {parent[:12]}"
    if status == 412:
        return RemoteMovedError(
            f"{plan.repo_id}@{plan.revision} moved since the push was planned on {parent[:12]}: "
            "someone else pushed; nothing of this push landed; re-run push to plan again",
            repo_id=plan.repo_id,
            status=412,
        )
    if status == 429:
        return _Attempt(exc, "rate_limit", rate_limit_wait(exc))
    if status == 409:
        return _Attempt(exc, "conflict")
    if status is not None and status >= 500:
        return _Attempt(exc, "lost")
    if isinstance(exc, ValueError) and isinstance(exc.__cause__, BadRequestError):
        # validate-yaml 400: huggingface_hub raises ValueError("Invalid metadata in README.md...")
        # from BadRequestError (hf_api.HfApi._validate_yaml).
        detail = "; ".join(line.lstrip("- ") for line in str(exc).splitlines()[1:] if line.strip())
        return InputError(
            f"{plan.repo_id}: the Hub refused README.md's metadata: {detail or describe(exc)}; {unchanged}",
            path="README.md",
        )
    if isinstance(exc, json.JSONDecodeError):
        return _Attempt(exc, "lost")  # an HTML error page (a 502 from the proxy) where JSON was due
    if status is None and isinstance(exc, OSError) and exc.filename is not None:
        local = {str(f.local) for f in plan.files}
        if str(exc.filename) in local or os.path.abspath(str(exc.filename)) in local:
            return InputError(f"{exc.filename}: {exc.strerror or exc} while pushing; {unchanged}")
    if isinstance(exc, PermissionError) and type(exc).__module__.startswith("hf_xet"):
        return HubUnavailable(
            f"{plan.repo_id}: Xet storage refused the write token ({exc}); {unchanged}",
            repo_id=plan.repo_id,
        )
    if status is None and (is_transport_failure(exc) or isinstance(exc, OSError | RuntimeError)):
        return _Attempt(exc, "lost")  # hf_xet raises built-in ConnectionError/OSError/RuntimeError
    if status is not None or isinstance(exc, httpx2.TransportError | HfHubHTTPError | OIDCError):
        error = to_hub_error(exc, plan.repo_id, plan.revision)
        error.message += f"; {unchanged}"
        return error
    if isinstance(exc, ValueError) and "LFS batch API returned errors" in str(exc):
        return HubUnavailable(f"{plan.repo_id}: the Hub refused the upload: {describe(exc)}; {unchanged}")
    return exc


def _recover(
    api: HfApi,
    plan: PushPlan,
    parent: str,
    failure: _Attempt,
    prs_before: dict[str, str] | None,
    attempts: int,
    max_attempts: int,
) -> tuple[str, str | None] | None:
    """Landed anyway -> (commit, PR ref); lost with attempts left -> None; else raise ``HubUnavailable``."""
    error = failure.error
    found = None if failure.kind != "lost" else _read_back(api, plan, parent, failure, prs_before)
    if failure.kind == "conflict":
        failure.wait = min(2**attempts, MAX_CONFLICT_WAIT)
    if failure.kind == "rate_limit" and failure.wait > MAX_RATE_LIMIT_WAIT:
        attempts = max_attempts  # the Hub asks for longer than this command waits
    if found is None and attempts >= max_attempts:
        raise HubUnavailable(
            f"{plan.repo_id}: push did not land after {attempts} attempt(s) ({describe(error)}); "
            f"the remote is unchanged at {parent[:12]}; re-run push: uploaded files are not sent again",
            repo_id=plan.repo_id,
            status=http_status(error),
        )
    return found


def _read_back(
    api: HfApi, plan: PushPlan, parent: str, failure: _Attempt, prs_before: dict[str, str] | None
) -> tuple[str, str | None] | None:
    """``_landed``, except that a Hub that cannot even be read back makes the outcome unknown.

    Never a bare HTTP error here: the attempt may have landed, and the line must say so.
    """
    try:
        return _landed(api, plan, parent, prs_before)
    except RemoteMovedError:
        raise
    except HubError as exc:
        raise HubUnavailable(
            f"{plan.repo_id}: a push attempt failed ({describe(failure.error)}) and the Hub could not be "
            f"read back ({exc.message}); whether the commit landed is unknown: run `hubrelease verify "
            f"--remote`",
            repo_id=plan.repo_id,
        ) from None


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
