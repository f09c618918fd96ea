"""Upload: the files to add go up in batches (``batches.py``), one ``preupload_lfs_files`` call
each, so the Hub registers each batch's data as it completes; a batch that fails is retried alone
and the batches before it are not sent again. Nothing is visible until the commit."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from urllib.parse import quote

import httpx2
from huggingface_hub import CommitOperationAdd, HfApi, get_session, hf_raise_for_status
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.lfs import post_lfs_batch_info
from huggingface_hub.utils import build_hf_headers

from hubrelease.errors import HubReleaseError, with_outcome
from hubrelease.hub.batches import Batch, batches
from hubrelease.hub.client import MAX_RATE_LIMIT_WAIT, http_status, to_hub_error
from hubrelease.hub.plan import PushPlan
from hubrelease.hub.push_state import PushState
from hubrelease.hub.recovery import MAX_CONFLICT_WAIT, Attempt, classify, gave_up
from hubrelease.hub.safe_open import check_unchanged


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


def upload(state: PushState, additions: list[CommitOperationAdd]) -> UploadReport:
    """Every batch uploaded (registered on the Hub), or the error that stopped it: nothing landed."""
    plan, notify = state.plan, state.notify
    files = plan.with_status("added", "changed")
    ops = {op.path_in_repo: op for op in additions}
    groups = batches(files, state.batch_bytes)
    stored = _stored(state.api, plan, additions, state.create_pr)
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
        tries = _upload_batch(state, batch, ops, label)
        retried += tries > 1
    return UploadReport(
        len(groups), len(files), total, len(held), sum(f.size for f in held), retried_batches=retried
    )


def _upload_batch(state: PushState, batch: Batch, ops: dict[str, CommitOperationAdd], label: str) -> int:
    """One batch up, retried alone after a lost attempt; returns the attempts it took."""
    plan, unchanged, max_attempts = state.plan, state.unchanged, state.max_attempts
    attempts = 0
    while True:
        attempts += 1
        check_unchanged(batch.files, state.opened)
        try:
            state.api.preupload_lfs_files(
                plan.repo_id,
                [ops[f.path] for f in batch.files],
                repo_type=plan.repo_type,
                revision=plan.revision,
                create_pr=state.create_pr,
            )
            return attempts
        except HubReleaseError:
            raise
        except Exception as exc:
            failure = classify(exc, plan, unchanged, uploading=True)
            if not isinstance(failure, Attempt):
                raise failure from None
            _xet_refusal(state, exc)
        if failure.kind == "lost":
            failure.wait = min(2**attempts, MAX_CONFLICT_WAIT)
        if attempts >= max_attempts or failure.wait > MAX_RATE_LIMIT_WAIT:
            raise gave_up(plan, f"{label} did not upload", failure, attempts, unchanged)
        state.notify(failure.retry_notice(f"upload of {label}", attempts, max_attempts))
        state.wait(failure.wait)


def _xet_refusal(state: PushState, exc: Exception) -> None:
    """After a Xet-stage failure (no HTTP status: hf_xet raises a bare ``ConnectionError`` even for a
    401/403 on the token route), ask that route again; a refusal stops the push at once.

    The route and query are huggingface_hub's (``utils/_xet.py`` ``xet_connection_info_refresh_url``).
    """
    if http_status(exc) is not None:
        return
    api, plan, unchanged = state.api, state.plan, state.unchanged
    url = (
        f"{api.endpoint}/api/{plan.repo_type}s/{plan.repo_id}/xet-write-token/{quote(plan.revision, safe='')}"
    )
    try:
        response = get_session().get(
            url + ("?create_pr=1" if state.create_pr else ""), headers=build_hf_headers(token=api.token)
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
