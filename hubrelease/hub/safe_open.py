"""Safe open of a release's files for upload: each opened once, before any byte is sent, without
following a symlink, and checked to be the file its digest was taken from (same inode, size,
mtimes) before each batch and again before the commit, so only the pinned bytes can land."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from huggingface_hub import CommitOperationAdd, CommitOperationDelete

from hubrelease.errors import CheckFailed
from hubrelease.fsutil import descriptor_path, open_regular
from hubrelease.hashing import StatKey
from hubrelease.hub.plan import PlannedFile, PushPlan

Operation = CommitOperationAdd | CommitOperationDelete
Opened = dict[str, int]
"""Repo path -> descriptor of the planned file (``open_uploads``)."""


@contextlib.contextmanager
def open_uploads(plan: PushPlan) -> Iterator[Opened]:
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


def operations(plan: PushPlan, opened: Opened) -> tuple[list[CommitOperationAdd], list[Operation]]:
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
