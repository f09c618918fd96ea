"""Manifest + release folder + one snapshot of the remote -> a frozen ``PushPlan``.

The plan holds plain frozen values: each file's sha256 (from the preflight verify's stat cache, so
nothing is hashed twice) and the ``StatKey`` it was taken at, which ``push.py`` checks again before
uploading and before committing (git's stat rule: same inode, size, mtime and ctime, or the bytes
may have changed). It also fixes the parent commit: the push lands only if the branch is still
where it was when we planned. Building a plan from a ``RemoteSnapshot`` is pure except for that
stat work; ``read_remote`` is the one read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from huggingface_hub import HfApi
from huggingface_hub.utils.sha import git_hash

from hubrelease.errors import CheckFailed, InputError, NotFoundError
from hubrelease.fsutil import ReleaseFolder, open_regular, read_regular
from hubrelease.hashing import StatCache, StatKey, sha256_file
from hubrelease.hub.metadata import RemoteFile, list_files, repo_info
from hubrelease.manifest.editor import published_manifest
from hubrelease.manifest.models import Manifest
from hubrelease.release_files import SIGNATURE_NAME, published_paths, release_files

FileStatus = Literal["added", "changed", "unchanged"]


@dataclass(frozen=True)
class RemoteSnapshot:
    """The release branch as read once at planning time; ``commit`` None when the repo does not exist."""

    commit: str | None
    files: dict[str, RemoteFile]
    private: bool | None = None
    branch_missing: bool = False
    """The repo exists but the release branch does not: ``commit``/``files`` are main's, to branch from."""


@dataclass(frozen=True)
class PlannedFile:
    """One file of the release and how it compares with the remote."""

    path: str
    local: Path
    size: int
    sha256: str
    status: FileStatus
    stat: StatKey | None = None


@dataclass(frozen=True)
class PushPlan:
    """Everything a push will do, decided before any byte is uploaded."""

    repo_id: str
    repo_type: str
    revision: str
    parent_commit: str | None
    files: tuple[PlannedFile, ...]
    deleted: tuple[RemoteFile, ...]
    manifest: Manifest
    root: Path
    manifest_path: Path
    remote_private: bool | None = None
    create_branch: bool = False

    def with_status(self, *statuses: FileStatus) -> list[PlannedFile]:
        return [f for f in self.files if f.status in statuses]

    @property
    def upload_bytes(self) -> int:
        return sum(f.size for f in self.with_status("added", "changed"))

    @property
    def has_changes(self) -> bool:
        return bool(self.with_status("added", "changed") or self.deleted)

    def held_by(self, remote: RemoteSnapshot) -> bool:
        """True when ``remote`` already holds this release: every file unchanged, every deletion gone."""
        return not self.against(remote).has_changes

    def against(self, remote: RemoteSnapshot) -> PushPlan:
        """This plan with each file compared to ``remote`` instead, and only the deletions still due
        there (what a staging pull request still lacks)."""
        files = tuple(
            replace(f, status=_status(remote.files.get(f.path), f.local, f.size, f.sha256))
            for f in self.files
        )
        return replace(self, files=files, deleted=tuple(f for f in self.deleted if f.path in remote.files))

    def to_dict(self) -> dict[str, object]:
        """The ``plan`` object of ``push --json`` (docs/manual/publishing.md, "push --json")."""
        return {
            "repo_id": self.repo_id,
            "repo_type": self.repo_type,
            "revision": self.revision,
            "parent_commit": self.parent_commit,
            "upload_bytes": self.upload_bytes,
            "files": [
                {"path": f.path, "status": f.status, "size": f.size, "sha256": f.sha256} for f in self.files
            ],
            "deleted": [{"path": f.path, "size": f.size} for f in self.deleted],
        }


def read_remote(api: HfApi, manifest: Manifest, revision: str | None = None) -> RemoteSnapshot:
    """Commit and file metadata of the release branch, or of ``revision`` (1 + files/1000 requests)."""
    release = manifest.release
    branch_missing = False
    try:
        info = repo_info(api, release.repo_id, revision or release.revision, release.repo_type)
    except NotFoundError:
        if revision is not None or release.revision == "main":
            return RemoteSnapshot(None, {})
        try:  # a new branch is created from main's head, so plan against main
            info = repo_info(api, release.repo_id, "main", release.repo_type)
        except NotFoundError:
            return RemoteSnapshot(None, {})
        branch_missing = True
    commit = str(info.sha)
    files = list_files(api, release.repo_id, commit, release.repo_type)
    return RemoteSnapshot(commit, files, getattr(info, "private", None), branch_missing)


def build_plan(manifest: Manifest, manifest_path: Path, root: Path, remote: RemoteSnapshot) -> PushPlan:
    """Classify every release file against ``remote``; anything else on the remote is deleted."""
    planned = []
    folder = ReleaseFolder(root)  # each folder resolved once, not each of 25,000 files
    files = release_files(manifest, manifest_path, root)
    cache = StatCache(root.resolve())
    try:
        for item in files:
            if item.kind == "manifest":
                local = published_manifest(manifest, manifest_path, root)
            else:
                local = folder.path(item.local)
            if not local.is_file():
                raise InputError(f"{item.path}: file to publish is missing", path=local)
            key, sha256 = _digest(cache, root, item.path, local, item.sha256)
            status = _status(remote.files.get(item.path), local, key.size, sha256)
            planned.append(PlannedFile(item.path, local, key.size, sha256, status, key))
        signature = root / SIGNATURE_NAME
        if signature.is_file() and all(f.path != SIGNATURE_NAME for f in planned):
            # The signature rides in the same commit, and only if it signs exactly what is published.
            from hubrelease.signing.release import check_signer
            from hubrelease.signing.statement import check_signs

            check_signs(signature, {f.path: f.sha256 for f in planned})
            check_signer(manifest, root, signature)
            key, sha256 = _digest(cache, root, SIGNATURE_NAME, signature, None)
            status = _status(remote.files.get(SIGNATURE_NAME), signature, key.size, sha256)
            planned.append(PlannedFile(SIGNATURE_NAME, signature, key.size, sha256, status, key))
    finally:
        cache.close()
    published = published_paths(files) | {f.path for f in planned}  # a signature too
    deleted = tuple(f for name, f in sorted(remote.files.items()) if name not in published)
    release = manifest.release
    return PushPlan(
        release.repo_id,
        release.repo_type,
        release.revision,
        remote.commit,
        tuple(planned),
        deleted,
        manifest,
        root,
        manifest_path,
        remote.private,
        remote.branch_missing,
    )


def _digest(cache: StatCache, root: Path, path: str, local: Path, pinned: str | None) -> tuple[StatKey, str]:
    """(stat, sha256) of one file to publish, hashing only what the stat cache cannot vouch for.

    A pinned file was just verified by preflight, which left its digest in the stat cache; a hit
    under the current stat proves the bytes are the pinned ones. A miss (racily clean, cache off,
    changed since) hashes the file once, between two stats that must agree. The file is opened
    without following a symlink (``fsutil.open_regular``): one swapped in is never read, not even
    to hash it.
    """
    try:
        fd = open_regular(local)
    except OSError as exc:
        raise InputError(
            f"{path}: cannot be published: not a regular file ({exc.strerror}); nothing was pushed",
            path=local,
        ) from None
    try:
        key = StatKey.of(os.fstat(fd))
        if pinned is not None:
            try:
                rel = local.resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                rel = None
            if rel is not None and cache.lookup(rel, key) == pinned:
                return key, pinned
        sha256 = sha256_file(fd)
        if StatKey.of(os.fstat(fd)) != key:
            raise CheckFailed(f"{path}: changed while it was being hashed for the push; nothing was pushed")
    finally:
        os.close(fd)
    if pinned is not None and sha256 != pinned:
        raise CheckFailed(
            f"{path}: sha256 {sha256} is not the pinned {pinned} (changed since verify); nothing was pushed",
            path=local,
        )
    return key, sha256


def _status(remote: RemoteFile | None, local: Path, size: int, sha256: str) -> FileStatus:
    if remote is None:
        return "added"
    if remote.size != size:
        return "changed"
    if remote.sha256 is not None:
        return "unchanged" if remote.sha256 == sha256 else "changed"
    # Regular file on the Hub: only its git blob id is known; the file is small, so hash it here.
    return "unchanged" if git_hash(read_regular(local)) == remote.blob_id else "changed"


# The Hub's limits (create_commit's docstring, hf_api.py:5048 in huggingface_hub 2.4.0, "limited to
# 25k LFS files and a 1GB payload for regular files"; per-folder and per-file numbers:
# huggingface.co/docs/hub/storage-limits, "Per file: 50GB max", "Per folder: <10k files"; 50 GB is
# also constants.MAX_HTTP_DOWNLOAD_SIZE, the most a plain-HTTP client downloads).
MAX_FILES_PER_COMMIT = 25_000
MAX_REGULAR_BYTES_PER_COMMIT = 1_000_000_000
MAX_FOLDER_ENTRIES = 10_000
MAX_FILE_BYTES = 50 * 1000 * 1000 * 1000
# Files above this are always LFS/Xet (the Hub refuses larger regular files); smaller ones may be
# regular, depending on .gitattributes and content, which only the Hub decides (preupload).
REGULAR_FILE_MAX = 10 << 20
# Not a Hub limit, our choice: the most bytes one commit's upload carries before the release is
# staged, so that no single commit step waits on hundreds of GB. 20 GB is the largest file the Hub
# recommends (huggingface.co/docs/hub/repositories-recommendations, "File size <20GB").
MAX_BYTES_PER_COMMIT = 20 * 1000 * 1000 * 1000
# Files per staged commit: huggingface_hub's own multi-commit upload stays at 20 to 1,000 files per
# commit "to stay below server-side commit timeouts" (_upload_pipeline.py:69, COMMIT_SIZE_SCALE).
STAGED_COMMIT_FILES = 1_000


@dataclass(frozen=True)
class CommitLimits:
    """What one commit carries at most. A release above any of them is staged on a pull request in
    commits of at most ``staged_files`` files, ``bytes`` bytes and ``regular_bytes`` of small files
    each, then merged (``stage.py``); parameters so that tests can stage a small release."""

    files: int = MAX_FILES_PER_COMMIT
    regular_bytes: int = MAX_REGULAR_BYTES_PER_COMMIT
    bytes: int = MAX_BYTES_PER_COMMIT
    staged_files: int = STAGED_COMMIT_FILES

    def exceeded_by(self, plan: PushPlan) -> bool:
        uploads = plan.with_status("added", "changed")
        return (
            len(uploads) + len(plan.deleted) > self.files
            or plan.upload_bytes > self.bytes
            or sum(f.size for f in uploads if f.size <= REGULAR_FILE_MAX) > self.regular_bytes
        )


def check_limits(plan: PushPlan, limits: CommitLimits = CommitLimits(), *, merge: bool = True) -> list[str]:
    """Warnings for the Hub's soft limits and for a release that will be staged (and merged, unless
    the push asks for a pull request); ``InputError`` for a file over 50 GB (no commit carries it)."""
    uploads = plan.with_status("added", "changed")
    huge = [f for f in plan.files if f.size > MAX_FILE_BYTES]
    if huge:
        raise InputError(
            f"{huge[0].path}: {huge[0].size:,} bytes, over the Hub's 50 GB per file; split it "
            "(e.g. sharded safetensors, gguf-split)",
            path=huge[0].local,
        )
    warnings = []
    if limits.exceeded_by(plan):
        warnings.append(
            f"{len(uploads) + len(plan.deleted):,} file(s) to change, {plan.upload_bytes:,} bytes: more than "
            f"one commit carries ({limits.files:,} files, {limits.bytes:,} bytes, {limits.regular_bytes:,} "
            "bytes of small files); staged on a pull request"
            + (f", then merged into {plan.revision} as one commit" if merge else ", left open for review")
        )
    folders: dict[str, int] = {}
    for f in plan.files:
        parent = f.path.rpartition("/")[0]
        folders[parent] = folders.get(parent, 0) + 1
    for folder, count in sorted(folders.items()):
        if count > MAX_FOLDER_ENTRIES:
            warnings.append(
                f"{folder or '(repo root)'}: {count:,} files in one folder, over the Hub's recommended "
                f"{MAX_FOLDER_ENTRIES:,}; listing and browsing it will be slow"
            )
    return warnings
