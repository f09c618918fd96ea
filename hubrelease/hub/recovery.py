"""Commit attempts and their recovery: what a failed attempt means (retry, or the one line to stop
with), and after a lost commit attempt, whether it landed anyway (read back from the Hub)."""

from __future__ import annotations

import json
import os

import httpx2
from huggingface_hub import HfApi
from huggingface_hub.errors import BadRequestError, HfHubHTTPError, OIDCError

from hubrelease.errors import (
    HubError,
    HubUnavailable,
    InputError,
    MetadataRefused,
    RemoteMovedError,
    with_outcome,
)
from hubrelease.hub import client
from hubrelease.hub.client import (
    MAX_RATE_LIMIT_WAIT,
    describe,
    http_status,
    is_transport_failure,
    metadata,
    rate_limit_wait,
    to_hub_error,
)
from hubrelease.hub.metadata import resolve_commit
from hubrelease.hub.plan import PushPlan, read_remote
from hubrelease.hub.push_state import PushState
from hubrelease.outcome import Outcome

MAX_CONFLICT_WAIT = 30
# Refusals the Hub answers before acting on a commit: nothing of it landed.
REFUSED_BEFORE_ACTING = {400, 401, 403, 409, 412, 413, 422, 429}


def branch_head(api: HfApi, plan: PushPlan) -> str:
    return resolve_commit(api, plan.repo_id, plan.revision, plan.repo_type)


def pull_requests(api: HfApi, plan: PushPlan) -> dict[str, str]:
    refs = metadata(
        plan.repo_id,
        None,
        lambda: api.list_repo_refs(plan.repo_id, repo_type=plan.repo_type, include_pull_requests=True),
    )
    return {r.ref: r.target_commit for r in refs.pull_requests or []}


class Attempt(Exception):
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


def late_landing(api: HfApi, plan: PushPlan) -> str | None:
    """After a retry was refused as stale: the head, if it holds exactly this release (ours, late)."""
    try:
        late = branch_head(api, plan)
        return late if _holds(api, plan, late) else None
    except HubError as exc:
        raise HubUnavailable(
            f"{plan.repo_id}: a retry was refused as stale (HTTP 412) and the Hub could not be read back "
            f"({exc.message}); whether an earlier attempt landed is unknown: run `hubrelease verify --remote`",
            repo_id=plan.repo_id,
            outcome=Outcome("unknown", plan.repo_id, plan.revision, None),
        ) from None


def gave_up(plan: PushPlan, what: str, failure: Attempt, attempts: int, unchanged: Outcome) -> HubUnavailable:
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


def classify(exc: Exception, plan: PushPlan, unchanged: Outcome, *, uploading: bool) -> Exception:
    """What one failed attempt means: retry (``Attempt``), or the one-line error to stop with.

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
        return Attempt(exc, "rate_limit", rate_limit_wait(exc))
    if status == 409:
        return Attempt(exc, "conflict")
    if status is not None and (status >= 500 or (not uploading and status not in REFUSED_BEFORE_ACTING)):
        return Attempt(exc, "lost")
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
        return Attempt(exc, "lost")  # an HTML error page (a 502 from the proxy) where JSON was due
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
        return Attempt(exc, "lost")  # hf_xet raises built-in ConnectionError/OSError/RuntimeError
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


def recover(state: PushState, failure: Attempt, attempts: int) -> Outcome | None:
    """Landed anyway -> its outcome; lost with attempts left -> None; else raise ``HubUnavailable``."""
    plan, unchanged, max_attempts = state.plan, state.unchanged, state.max_attempts
    found = (
        None if failure.kind != "lost" else _read_back(state.api, plan, unchanged, failure, state.prs_before)
    )
    if failure.kind == "conflict":
        failure.wait = min(2**attempts, MAX_CONFLICT_WAIT)
    if found is None and (attempts >= max_attempts or failure.wait > MAX_RATE_LIMIT_WAIT):
        raise gave_up(plan, "push did not land", failure, attempts, unchanged)
    return found


def _read_back(
    api: HfApi, plan: PushPlan, unchanged: Outcome, failure: Attempt, prs_before: dict[str, str] | None
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
        prs = pull_requests(api, plan)
        new = [ref for ref in sorted(set(prs) - set(prs_before)) if _holds(api, plan, prs[ref])]
        return Outcome("landed", plan.repo_id, new[-1], prs[new[-1]]) if new else None
    head = branch_head(api, plan)
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
