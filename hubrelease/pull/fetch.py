"""Each file an engine loads, checked against the manifest's size and sha256 as it streams.

Before a byte is fetched, the Hub's listing at the commit must agree with the pin (a file replaced in
place shows there first, exit 1). While it streams, the bytes are hashed and never taken past the
pinned size; at the end a digest that is not the pinned one deletes the partial file and is exit 1,
naming the file. A partial file left by an interrupted pull is hashed and resumed where it stopped
(``Range``). Nothing is in place until it is whole and checked: the partial is renamed.

Two layouts: ``--dir DIR`` puts each file at its repo path under DIR (the partial beside it as
``NAME.incomplete``); without it, huggingface_hub's cache (``hub.stream.CachePaths``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from hubrelease.errors import CheckFailed, HubUnavailable, InputError
from hubrelease.hashing import sha256_file
from hubrelease.hub.ranged import Traffic
from hubrelease.hub.stream import CachePaths, cache_storage, remember_ref, stream
from hubrelease.manifest.models import Artifact

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from hubrelease.pull.resolve import Published

INCOMPLETE = ".incomplete"


@dataclass(frozen=True)
class Fetched:
    """One file in place and checked."""

    path: str
    local: Path
    size: int
    sha256: str
    resumed_from: int
    """Bytes of an earlier partial that were kept (0: fetched from the start)."""
    fetched: bool
    """False when a checked copy was already there (nothing downloaded)."""


@dataclass(frozen=True)
class Place:
    """Where one file goes: ``final`` once checked, ``partial`` while it streams, ``shown`` for the user."""

    final: Path
    partial: Path
    shown: Path
    cache: CachePaths | None = None


def pinned(artifact: Artifact) -> tuple[int, str]:
    """The pinned (size, sha256); a file pinned by less cannot be checked, so it is not pulled (exit 2)."""
    if artifact.size is None or artifact.sha256 is None:
        raise InputError(
            f"{artifact.path}: the manifest pins no size and sha256 for it, so pull cannot check it"
        )
    return artifact.size, artifact.sha256


def check_listing(published: Published, artifacts: list[Artifact]) -> None:
    """Every file is on the Hub at the commit with the pinned size and (LFS) sha256, before any download."""
    problems = []
    for artifact in artifacts:
        size, sha256 = pinned(artifact)
        entry = published.files.get(artifact.path)
        if entry is None:
            problems.append(f"{artifact.path}: not on the Hub at {published.label}")
        elif entry.size != size or (entry.sha256 is not None and entry.sha256 != sha256):
            listed = f"{entry.size} bytes" + (f", sha256 {entry.sha256}" if entry.sha256 else "")
            problems.append(
                f"{artifact.path}: the Hub lists {listed}; the manifest pins {size} bytes, sha256 {sha256}"
            )
    if problems:
        raise CheckFailed("; ".join(problems), path=published.label)


def place(published: Published, artifact: Artifact, directory: Path | None, cache_dir: Path | None) -> Place:
    """Where ``artifact`` goes in ``directory``, else in the cache (its blob named as huggingface_hub names it)."""
    if directory is not None:
        final = directory.joinpath(*PurePosixPath(artifact.path).parts)
        return Place(final, final.with_name(final.name + INCOMPLETE), final)
    entry = published.files[artifact.path]
    etag = entry.sha256 or entry.blob_id
    storage = cache_storage(published.repo_id, published.repo_type, cache_dir)
    paths = CachePaths(storage, published.commit, artifact.path, etag)
    return Place(paths.blob, paths.incomplete, paths.snapshot, paths)


def _has(path: Path, size: int, sha256: str) -> bool:
    return path.is_file() and path.stat().st_size == size and sha256_file(path) == sha256


def _resume_point(partial: Path, size: int) -> tuple[int, hashlib._Hash]:
    """Bytes of ``partial`` to keep, and the hash of them (a partial longer than the file is dropped)."""
    digest = hashlib.sha256()
    if not partial.is_file() or partial.stat().st_size > size:
        partial.unlink(missing_ok=True)
        return 0, digest
    with partial.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return partial.stat().st_size, digest


def fetch_one(
    api: HfApi, published: Published, artifact: Artifact, where: Place, traffic: Traffic
) -> Fetched:
    """``artifact`` streamed into ``where.partial`` (resumed), checked, then renamed into place."""
    size, sha256 = pinned(artifact)
    if _has(where.final, size, sha256):
        if where.cache is not None:
            where.cache.link()
        return Fetched(artifact.path, where.shown, size, sha256, 0, fetched=False)
    where.partial.parent.mkdir(parents=True, exist_ok=True)
    start, digest = _resume_point(where.partial, size)
    got = start
    with open(where.partial, "ab") as out:
        if got < size:
            with stream(
                api,
                published.repo_id,
                artifact.path,
                published.commit,
                published.repo_type,
                start=start,
                traffic=traffic,
            ) as chunks:
                for chunk in chunks:
                    piece = chunk[: size - got]
                    out.write(piece)
                    digest.update(piece)
                    got += len(piece)
                    if got >= size:
                        break
    label = f"{published.label}:{artifact.path}"
    if got < size:  # the answer ended early: what arrived is kept for the next pull to resume
        raise HubUnavailable(
            f"{label}: the Hub sent {got:,} of {size:,} bytes; run pull again to resume",
            repo_id=published.repo_id,
        )
    if digest.hexdigest() != sha256:
        where.partial.unlink(missing_ok=True)
        raise CheckFailed(
            f"the Hub sent bytes with sha256 {digest.hexdigest()}, not the pinned {sha256}; "
            "the partial file was deleted",
            path=label,
        )
    os.replace(where.partial, where.final)
    if where.cache is not None:
        where.cache.link()
    return Fetched(artifact.path, where.shown, size, sha256, start, fetched=True)


def fetch_files(
    api: HfApi,
    published: Published,
    artifacts: list[Artifact],
    directory: Path | None,
    cache_dir: Path | None = None,
    *,
    traffic: Traffic | None = None,
) -> list[Fetched]:
    """``artifacts`` in place and checked, one after another (a pull is bound by the link, not by threads)."""
    check_listing(published, artifacts)
    counted = traffic if traffic is not None else Traffic()
    done = [
        fetch_one(api, published, a, place(published, a, directory, cache_dir), counted) for a in artifacts
    ]
    if directory is None and done:
        storage = cache_storage(published.repo_id, published.repo_type, cache_dir)
        remember_ref(storage, published.revision, published.commit)
    return done
