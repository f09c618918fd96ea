"""Hub metadata reads: a revision fixed to its commit, and the files of a repo at a commit.

Nothing is downloaded. One ``repo_info`` fixes the revision to a commit; ``list_repo_tree``
(recursive, paginated: 1000 entries per page) then lists every file at that commit with its size,
git blob SHA-1 and LFS sha256. ``repo_info().siblings`` is never used: the Hub truncates it for big
repos (huggingface_hub 2.x moved to the tree for the same reason). Named files are read with
``get_paths_info``, 500 paths per request. Remote verify (``hub.remote_verify``), header reads
(``hub.remote_headers``), push's plan, lock and import read the Hub through these.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from huggingface_hub import HfApi
from huggingface_hub.hf_api import DatasetInfo, KernelInfo, ModelInfo, RepoFile, SpaceInfo

from hubrelease.hub.client import metadata

PATHS_PER_REQUEST = 500
RepoInfo = ModelInfo | DatasetInfo | SpaceInfo | KernelInfo


@dataclass(frozen=True)
class RemoteFile:
    """What the Hub says about one file, with no bytes transferred."""

    path: str
    size: int
    blob_id: str
    sha256: str | None


def _remote_file(entry: RepoFile) -> RemoteFile:
    sha256 = entry.lfs.sha256 if entry.lfs is not None else None
    return RemoteFile(entry.path, entry.size, entry.blob_id, sha256)


def remote_files(
    api: HfApi, repo_id: str, paths: Sequence[str], revision: str, repo_type: str = "model"
) -> dict[str, RemoteFile]:
    """Metadata of ``paths`` at ``revision`` (a commit, ideally), ``PATHS_PER_REQUEST`` per request."""
    found: dict[str, RemoteFile] = {}
    for start in range(0, len(paths), PATHS_PER_REQUEST):
        chunk = list(paths[start : start + PATHS_PER_REQUEST])
        call = functools.partial(api.get_paths_info, repo_id, chunk, revision=revision, repo_type=repo_type)
        entries = metadata(repo_id, revision, call)
        found.update((e.path, _remote_file(e)) for e in entries if isinstance(e, RepoFile))
    return found


def list_files(api: HfApi, repo_id: str, commit: str, repo_type: str = "model") -> dict[str, RemoteFile]:
    """Every file at ``commit``, from the recursive tree listing (all pages), never truncated."""
    entries = metadata(
        repo_id,
        commit,
        lambda: list(api.list_repo_tree(repo_id, recursive=True, revision=commit, repo_type=repo_type)),
    )
    return {e.path: _remote_file(e) for e in entries if isinstance(e, RepoFile)}


def repo_info(api: HfApi, repo_id: str, revision: str, repo_type: str = "model") -> RepoInfo:
    """The repo at ``revision`` (its commit in ``.sha``, visibility in ``.private``); siblings unused."""
    return metadata(repo_id, revision, lambda: api.repo_info(repo_id, revision=revision, repo_type=repo_type))


def resolve_commit(api: HfApi, repo_id: str, revision: str, repo_type: str = "model") -> str:
    """Revision (branch, tag or commit) -> commit id, in one request."""
    return str(repo_info(api, repo_id, revision, repo_type).sha)
