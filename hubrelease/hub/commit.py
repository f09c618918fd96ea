"""One commit of a push: its files uploaded (``upload.py``), then the commit attempts, each guarded
by the parent read when planning, recovered when an attempt is lost (``recovery.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from huggingface_hub import CommitInfo, HfApi

from hubrelease.errors import HubReleaseError, RemoteMovedError
from hubrelease.hub.client import describe
from hubrelease.hub.plan import PushPlan
from hubrelease.hub.push_state import Notify, PushState
from hubrelease.hub.recovery import Attempt, classify, late_landing, pull_requests, recover
from hubrelease.hub.safe_open import Operation, check_unchanged, open_uploads, operations
from hubrelease.hub.upload import UploadReport, upload
from hubrelease.hub.xet_env import bound_xet_retries
from hubrelease.outcome import Outcome


@dataclass(frozen=True, kw_only=True)
class Committer:
    """Commits one plan's files as a push does, with the settings every commit of one push shares.

    Called as a ``stage.CommitPart`` for each staged part; ``commit`` for a single push.
    """

    api: HfApi
    notify: Notify
    wait: Callable[[float], None]
    max_attempts: int
    batch_bytes: int

    def __call__(
        self, part: PushPlan, unchanged: Outcome, message: str, create_pr: bool
    ) -> tuple[Outcome, int, str | None, UploadReport]:
        """One staged part, the open pull requests read first to find a lost attempt's."""
        prs_before = pull_requests(self.api, part) if create_pr else None
        return self.commit(part, unchanged, message=message, create_pr=create_pr, prs_before=prs_before)

    def commit(
        self,
        plan: PushPlan,
        unchanged: Outcome,
        *,
        message: str,
        create_pr: bool,
        prs_before: dict[str, str] | None,
    ) -> tuple[Outcome, int, str | None, UploadReport]:
        """``plan``'s files opened, uploaded and committed on ``unchanged`` (``upload_and_commit``)."""
        with open_uploads(plan) as opened:
            state = PushState(
                api=self.api,
                plan=plan,
                opened=opened,
                unchanged=unchanged,
                message=message,
                create_pr=create_pr,
                prs_before=prs_before,
                notify=self.notify,
                wait=self.wait,
                max_attempts=self.max_attempts,
                batch_bytes=self.batch_bytes,
            )
            return upload_and_commit(state)


def upload_and_commit(state: PushState) -> tuple[Outcome, int, str | None, UploadReport]:
    """The batches up, then the commit attempts: (outcome, commit attempts, PR URL, upload report)."""
    plan, notify = state.plan, state.notify
    files = plan.with_status("added", "changed")
    additions, ops = operations(plan, state.opened)
    bound_xet_retries()
    uploaded = upload(state, additions)
    check_unchanged(
        files, state.opened
    )  # the uploaded bytes are the pinned ones only if nothing changed meanwhile
    outcome, attempts, pr_url = state.unchanged, 0, None
    while True:
        attempts += 1
        try:
            info = _commit_or_raise(state, ops)
            ref = info.pr_revision or plan.revision
            outcome, pr_url = Outcome("landed", plan.repo_id, ref, info.oid), info.pr_url
            break
        except RemoteMovedError:
            # A retry refused as stale may be refused by our own earlier attempt, which the
            # Hub finished after we had looked (a timed-out commit POST goes on server-side).
            late = None if attempts == 1 or state.create_pr else late_landing(state.api, plan)
            if late is None:
                raise
            outcome = Outcome("landed", plan.repo_id, plan.revision, late)
            notify(f"an earlier attempt landed after all: {plan.repo_id}@{plan.revision} is at {late[:12]}")
            break
        except Attempt as failure:
            found = recover(state, failure, attempts)
            if found is not None:
                outcome = found
                notify(
                    f"the Hub answered with an error ({describe(failure.error)}), but the commit landed "
                    f"at {plan.repo_id}@{found.ref}"
                )
                break
            notify(failure.retry_notice(f"commit attempt {attempts}", attempts, state.max_attempts))
            state.wait(failure.wait)
    return outcome, attempts, pr_url, uploaded


def _commit_or_raise(state: PushState, ops: list[Operation]) -> CommitInfo:
    """One commit attempt (the data is uploaded). Retryable failures -> ``Attempt``."""
    plan = state.plan
    check_unchanged(plan.with_status("added", "changed"), state.opened)
    try:
        return state.api.create_commit(
            plan.repo_id,
            ops,
            commit_message=state.message,
            repo_type=plan.repo_type,
            revision=plan.revision,
            parent_commit=state.unchanged.commit,
            create_pr=state.create_pr,
        )
    except HubReleaseError:
        raise
    except Exception as exc:
        raise classify(exc, plan, state.unchanged, uploading=False) from None
