"""A file of one commit streamed from a byte offset, and where huggingface_hub's cache keeps it.

Why not ``hf_hub_download``: it writes the whole file into the cache before anyone can check it, and
checks nothing a manifest pins; ``hubrelease pull`` hashes every chunk as it arrives and stops at the
first byte past the pinned size. The HTTP is still huggingface_hub's, as in ``hub.ranged``: the resolve
URL (``hf_hub_url``), its headers (token, user agent) and ``http_stream_backoff`` on its shared session.
A resumed read asks ``Range: bytes=N-``; a server that ignores it sends the file from byte 0, and the
first N bytes are skipped here.

The cache layout is huggingface_hub's own (2.4.0 ``file_download.py``: the repo folder from its
``repo_folder_name``, :747; ``blobs/<etag>``, :1200, with a partial blob as ``<etag>.incomplete``, :1286;
``snapshots/<commit>/<path>`` a relative symlink to the blob, ``_create_symlink`` :633; ``refs/<revision>``
holding the commit, ``_cache_commit_hash_for_specific_revision`` :727), so ``hf_hub_download(...,
revision=COMMIT)`` and the engines that call it find the files without a request. Written here, not by
those private helpers, because the blob must be checked before it is renamed into place.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import httpx2
from huggingface_hub import HfApi, constants, hf_hub_url
from huggingface_hub.errors import EntryNotFoundError
from huggingface_hub.file_download import repo_folder_name
from huggingface_hub.utils import build_hf_headers, hf_raise_for_status, http_stream_backoff

from hubrelease.errors import HubUnavailable, NotFoundError
from hubrelease.fsutil import atomic_write_text
from hubrelease.hub.client import answer_fault, describe, read_errors
from hubrelease.hub.ranged import Traffic

CHUNK = 1 << 20


@contextlib.contextmanager
def stream(
    api: HfApi, repo_id: str, path: str, commit: str, repo_type: str, *, start: int, traffic: Traffic
) -> Iterator[Iterator[bytes]]:
    """The bytes of ``path`` at ``commit`` from offset ``start`` on, in chunks, counted in ``traffic``."""
    url = hf_hub_url(repo_id, path, repo_type=repo_type, revision=commit, endpoint=api.endpoint)
    headers = build_hf_headers(token=api.token, library_name="hubrelease")
    if start:
        headers["Range"] = f"bytes={start}-"
    traffic.requests += 1
    with read_errors(repo_id, commit):
        try:
            with http_stream_backoff("GET", url, headers=headers) as response:
                hf_raise_for_status(response)
                skip = start if start and response.status_code != 206 else 0
                yield _chunks(response.iter_bytes(CHUNK), skip, traffic, repo_id, path)
        except EntryNotFoundError:
            raise NotFoundError(
                f"{repo_id}@{commit[:12]}: {path}: file not found", repo_id=repo_id, status=404
            ) from None


def _chunks(chunks: Iterator[bytes], skip: int, traffic: Traffic, repo_id: str, path: str) -> Iterator[bytes]:
    try:
        for chunk in chunks:
            traffic.fetched_bytes += len(chunk)
            if skip >= len(chunk):
                skip -= len(chunk)
                continue
            yield bytes(chunk[skip:])
            skip = 0
    except httpx2.RequestError as exc:
        raise HubUnavailable(
            f"{repo_id}: {path}: the Hub's answer {answer_fault(exc) or 'broke off'} ({describe(exc)})",
            repo_id=repo_id,
        ) from None


def cache_storage(repo_id: str, repo_type: str, cache_dir: Path | None = None) -> Path:
    """A repo's folder in huggingface_hub's cache (``cache_dir`` default: ``HF_HUB_CACHE``)."""
    return Path(cache_dir or constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo_id, repo_type=repo_type)


def remember_ref(storage: Path, revision: str, commit: str) -> None:
    """``refs/<revision>``: what a branch or tag pointed at when it was resolved (nothing for a commit)."""
    if revision != commit:
        atomic_write_text(storage / "refs" / revision, commit)


class CachePaths:
    """Where huggingface_hub's cache keeps one file of one commit, under a repo's ``storage`` folder."""

    def __init__(self, storage: Path, commit: str, path: str, etag: str) -> None:
        self.blob = storage / "blobs" / etag
        self.incomplete = self.blob.with_name(f"{etag}.incomplete")
        self.snapshot = storage.joinpath("snapshots", commit, *PurePosixPath(path).parts)

    def link(self) -> None:
        """The snapshot entry as a relative symlink to the blob, as huggingface_hub makes it."""
        self.snapshot.parent.mkdir(parents=True, exist_ok=True)
        relative = os.path.relpath(self.blob, self.snapshot.parent)
        with contextlib.suppress(FileNotFoundError):
            self.snapshot.unlink()
        self.snapshot.symlink_to(relative)
