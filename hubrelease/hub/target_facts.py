"""A target's facts (``lint.target``) read from the Hub: for ``lint --target hf://...`` and a manifest's pin.

Only the header is read (range requests, ``hub.remote_headers``): shard 1 of a GGUF set holds every
key, a config.json is a few kB. A manifest's pinned target is read where ``lint.target.pinned_source``
says and remembered in the release folder under its pin (the header sha256 is checked against the
header read), so a local verify lints against the target without the network.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from hubrelease.errors import CheckFailed
from hubrelease.formats.gguf_header import gguf_set, split_names
from hubrelease.lint.target import (
    TargetFacts,
    cached_target,
    facts_from_config,
    facts_from_gguf,
    pinned_source,
    remember_target,
)

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from hubrelease.hub.remote_headers import RemoteRepo
    from hubrelease.manifest.models import Manifest


def read_hub_target(api: HfApi, uri: str) -> TargetFacts:
    """``--target hf://[datasets/]REPO[@REV]/FILE``: a GGUF (any shard) or a config.json (or a folder with one)."""
    from hubrelease.hub.remote_headers import RemoteRepo, parse_location

    location = parse_location(uri)
    repo = RemoteRepo(api, location.repo_id, location.revision, location.repo_type)
    facts, _ = _read(repo, location.path)
    return facts


def read_target_file(
    api: HfApi, repo_id: str, revision: str, path: str, repo_type: str = "model"
) -> tuple[TargetFacts, str | None]:
    """A target's facts from one file of it on the Hub (a GGUF or a config.json), and the GGUF header sha256."""
    from hubrelease.hub.remote_headers import RemoteRepo

    return _read(RemoteRepo(api, repo_id, revision, repo_type), path)


def _read(repo: RemoteRepo, path: str) -> tuple[TargetFacts, str | None]:
    """(facts, header sha256 of the GGUF shard read; None for a config.json)."""
    from hubrelease.hub.remote_headers import gguf_header

    if path.endswith(".gguf"):
        parent = PurePosixPath(path).parent
        first = split_names(PurePosixPath(path).name, repo.uri(path))[0]
        shard = first if str(parent) == "." else f"{parent}/{first}"
        header = gguf_header(repo, shard)
        return facts_from_gguf(gguf_set([header]), repo.uri(shard)), header.header_sha256
    config = path if path.endswith(".json") else f"{path.rstrip('/')}/config.json".lstrip("/")
    return facts_from_config(repo.read_json(config), repo.uri(config)), None


def fetch_target(api: HfApi, manifest: Manifest, root: Path) -> TargetFacts | None:
    """Read the pinned target's facts from the Hub (unless remembered) and remember them.

    None when the manifest pins no target, or one whose bytes nothing pins (a branch without a
    header pin). ``CheckFailed`` when the header on the Hub is not the pinned one.
    """
    from hubrelease.hub.remote_headers import RemoteRepo

    source = pinned_source(manifest)
    if source is None:
        return None
    known = cached_target(manifest, root)
    if known is not None:
        return known
    pin = manifest.pins.targets[0]
    repo = RemoteRepo(api, pin.repo_id, pin.revision, pin.repo_type)
    facts, digest = _read(repo, source.path)
    if source.header_sha256 is not None and digest != source.header_sha256:
        raise CheckFailed(
            f"{repo.uri(source.path)}: header sha256 {digest} is not the pinned {source.header_sha256}",
            field="pins.targets",
        )
    remember_target(root, source.key, facts)
    return facts
