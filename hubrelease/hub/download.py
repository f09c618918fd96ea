"""Small files of one commit, downloaded whole and checked against the digest the Hub lists.

Not ``hf_hub_download``: it sends a HEAD before every GET (9,014 requests for 5,000 files) and
copies into the cache, while the tree listing (``hub.metadata``) already gave each file's size and
git blob id. Each file is one ``hub.ranged`` read up to its listed size, so the HTTP is
huggingface_hub's (resolve URL, headers, backoff on its shared session) and, in a command, within
``hub.bounds``; a server that sends more than the listing says is not read past it, and bytes that
are not the listed content (LFS sha256, else git blob id) stop the command.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

from huggingface_hub import HfApi
from huggingface_hub.utils.sha import git_hash

from hubrelease.errors import HubUnavailable
from hubrelease.hub.metadata import RemoteFile
from hubrelease.hub.ranged import RangedFile, Traffic

FETCH_THREADS = 8
"""Parallel downloads of small files, as many as huggingface_hub's ``snapshot_download`` uses."""


def read_whole(
    api: HfApi,
    repo_id: str,
    commit: str,
    repo_type: str,
    entry: RemoteFile,
    *,
    traffic: Traffic | None = None,
) -> bytes:
    """The file's bytes, one ranged read never past its listed size (not checked: see ``is_content``)."""
    return RangedFile(api, repo_id, entry.path, commit, repo_type, traffic or Traffic()).read_to(entry.size)


def is_content(data: bytes, entry: RemoteFile) -> bool:
    """Whether ``data`` is what the Hub lists for ``entry``: its LFS sha256, else its git blob id (an LFS
    file's blob id is its pointer's)."""
    if entry.sha256 is not None:
        return hashlib.sha256(data).hexdigest() == entry.sha256
    return git_hash(data) == entry.blob_id


def read_checked(api: HfApi, repo_id: str, commit: str, repo_type: str, entry: RemoteFile) -> bytes:
    """``read_whole``, refused (exit 4) unless the bytes are the listed content."""
    data = read_whole(api, repo_id, commit, repo_type, entry)
    if not is_content(data, entry):
        listed = f"sha256 {entry.sha256}" if entry.sha256 is not None else f"git blob {entry.blob_id}"
        raise HubUnavailable(
            f"{repo_id}@{commit[:12]}:{entry.path}: the Hub sent bytes that are not {listed}", repo_id=repo_id
        )
    return data


def download(
    api: HfApi, repo_id: str, commit: str, repo_type: str, files: list[RemoteFile], *, folder: Path
) -> dict[str, Path]:
    """``read_checked`` each file into ``folder`` at its repo path, ``FETCH_THREADS`` at a time."""

    def one(entry: RemoteFile) -> tuple[str, Path]:
        data = read_checked(api, repo_id, commit, repo_type, entry)
        target = folder.joinpath(*PurePosixPath(entry.path).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return entry.path, target

    with ThreadPoolExecutor(max_workers=FETCH_THREADS) as pool:
        return dict(pool.map(one, files))
