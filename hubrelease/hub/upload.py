"""Upload: the files to add go up in batches (``batches.py``), one ``preupload_lfs_files`` call
each, so the Hub registers each batch's data as it completes; a batch that fails is retried alone
and the batches before it are not sent again. Nothing is visible until the commit.

Batches overlap: ``UPLOAD_WORKERS`` of them are in flight at once, taken in plan order, as
``hf upload`` keeps that many files in flight (huggingface_hub's ``num_threads=5`` for LFS,
``hf_api.py`` ``preupload_lfs_files``; over Xet every call shares one hf_xet session, whose own
limits pace the chunking and xorb uploads as they pace ``hf upload``'s). Over plain LFS every object
over 10 MiB goes up on as many workers (``multipart.py``), shared by all batches and queued in plan
order: the parts of one object spread over them, at most two such objects ahead of the first
unregistered one, or up to five objects the Hub takes in one PUT. So a push killed midway leaves
unregistered at most the batches in flight (over Xet, less the xorbs already stored), over LFS at
most two objects in parts or five whole ones, and the smaller files in flight."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from urllib.parse import quote

import httpx2
from huggingface_hub import CommitOperationAdd, HfApi, constants, get_session, hf_raise_for_status
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.lfs import post_lfs_batch_info
from huggingface_hub.utils import build_hf_headers

from hubrelease.errors import HubReleaseError, with_outcome
from hubrelease.hub.batches import Batch, batches
from hubrelease.hub.client import MAX_RATE_LIMIT_WAIT, http_status, to_hub_error
from hubrelease.hub.multipart import PartQueue, multipart_actions, upload_parts
from hubrelease.hub.plan import PushPlan
from hubrelease.hub.push_state import PushState
from hubrelease.hub.recovery import MAX_CONFLICT_WAIT, Attempt, classify, gave_up
from hubrelease.hub.safe_open import check_unchanged

UPLOAD_WORKERS = 5
"""Batches (and LFS parts) in flight at once: huggingface_hub's default ``num_threads`` for LFS
uploads (``hf_api.py`` ``preupload_lfs_files``, ``_commit_api.py`` ``_upload_lfs_files``), what
``hf upload`` runs with."""


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
    lock = threading.Lock()

    def say(line: str) -> None:  # batches report from their workers, one line at a time
        with lock:
            notify(line)

    with (
        ThreadPoolExecutor(UPLOAD_WORKERS, thread_name_prefix="batch") as pool,
        ThreadPoolExecutor(UPLOAD_WORKERS, thread_name_prefix="part") as parts,
    ):
        queue = PartQueue(parts)
        jobs = [
            _Job(batch, number, f"batch {number}/{len(groups)}", ops, stored, say, queue)
            for number, batch in enumerate(groups, 1)
        ]
        futures = [pool.submit(_upload_batch, state, job) for job in jobs]
        try:
            wait(futures, return_when=FIRST_EXCEPTION)
        finally:  # after a failure (or Ctrl-C), the batches not started yet never start
            for future in futures:
                future.cancel()
        wait(futures)  # those running end (or fail) before the first error is raised
        errors = [e for f in futures if not f.cancelled() and (e := f.exception()) is not None]
        if errors:
            raise errors[0]
    retried = sum(f.result() > 1 for f in futures)
    return UploadReport(
        len(groups), len(files), total, len(held), sum(f.size for f in held), retried_batches=retried
    )


@dataclass(frozen=True)
class _Job:
    """One batch's work: its files, its label in progress lines, and what the workers share."""

    batch: Batch
    order: int
    label: str
    ops: dict[str, CommitOperationAdd]
    stored: set[str]
    say: Callable[[str], None]
    parts: PartQueue
    """The LFS part workers, shared by every batch."""


def _upload_batch(state: PushState, job: _Job) -> int:
    """One batch up, retried alone after a lost attempt; returns the attempts it took."""
    try:
        return _attempts(state, job)
    finally:
        job.parts.release(job.order)  # however it ended, the next batch may queue its parts


def _attempts(state: PushState, job: _Job) -> int:
    """The attempts at one batch: its large LFS objects in parts, then ``preupload_lfs_files``."""
    plan, unchanged, max_attempts = state.plan, state.unchanged, state.max_attempts
    batch, label = job.batch, job.label
    have = [f for f in batch.files if f.path in job.stored]
    job.say(
        f"{label}: {len(batch.files)} file(s), {batch.size:,} bytes"
        + (f", {sum(f.size for f in have):,} of them already on the Hub" if have else "")
    )
    additions = [job.ops[f.path] for f in batch.files]
    attempts = 0
    while True:
        attempts += 1
        check_unchanged(batch.files, state.opened)
        try:
            if not _xet_enabled():
                upload_parts(state, multipart_actions(state, additions), job.parts, job.order)
            state.api.preupload_lfs_files(
                plan.repo_id,
                additions,
                repo_type=plan.repo_type,
                revision=plan.revision,
                create_pr=state.create_pr,
                num_threads=UPLOAD_WORKERS,
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
        job.say(failure.retry_notice(f"upload of {label}", attempts, max_attempts))
        state.wait(failure.wait)


def _xet_enabled() -> bool:
    """Whether huggingface_hub uploads through hf_xet: installed and not disabled, as its own
    ``utils/_runtime.py`` ``is_xet_available`` (line 157) decides, read at each batch."""
    import importlib.util

    return not constants.HF_HUB_DISABLE_XET and importlib.util.find_spec("hf_xet") is not None


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
