"""``REPO[@REV]`` fixed to one commit, and the manifest published there, read and checked.

A branch or tag is resolved once; every later read (the manifest, the files) names the commit, so a
push landing mid-pull cannot mix two releases. The manifest is read whole (``hub.download.read_checked``:
never past the size the tree lists, its bytes the listed blob) and validated like a local one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hubrelease.errors import HubReleaseError, InputError, NotFoundError
from hubrelease.hub.download import read_checked
from hubrelease.hub.metadata import RemoteFile, list_files, resolve_commit
from hubrelease.manifest import load_manifest_text
from hubrelease.manifest.models import Manifest, is_repo_id

if TYPE_CHECKING:
    from huggingface_hub import HfApi

PUBLISHED_MANIFEST = "hubrelease.yaml"
"""The name ``push`` publishes a manifest under (its own file name; ``hubrelease.yaml`` by convention)."""
MANIFEST_MAX = 16 << 20
"""A published manifest larger than this is refused unread (a 1,000-artifact manifest is about 1 MB)."""


@dataclass(frozen=True)
class Ref:
    """``REPO[@REV]`` as given: the revision is None when the user named none."""

    repo_id: str
    revision: str | None

    @property
    def text(self) -> str:
        return f"{self.repo_id}@{self.revision}" if self.revision else self.repo_id


def parse_ref(spec: str) -> Ref:
    """``namespace/name[@branch|tag|commit]``; anything else is exit 2."""
    repo_id, _, revision = spec.partition("@")
    if not is_repo_id(repo_id) or "/" not in repo_id or (spec.endswith("@") or "@" in revision):
        raise InputError(f"{spec!r} is not REPO[@REVISION] (e.g. acme/drafter@v1.0)")
    return Ref(repo_id, revision or None)


@dataclass(frozen=True)
class Published:
    """A release as published at one commit: its files as the Hub lists them and its manifest."""

    repo_id: str
    repo_type: str
    revision: str
    """What was asked for (a branch, tag or commit)."""
    commit: str
    files: dict[str, RemoteFile]
    manifest: Manifest
    manifest_text: str

    @property
    def label(self) -> str:
        return f"{self.repo_id}@{self.commit[:12]}"


def read_published(api: HfApi, ref: Ref, repo_type: str = "model") -> Published:
    """The commit ``ref`` names (default branch ``main``), its listing and its manifest."""
    revision = ref.revision or "main"
    commit = resolve_commit(api, ref.repo_id, revision, repo_type)
    files = list_files(api, ref.repo_id, commit, repo_type)
    entry = files.get(PUBLISHED_MANIFEST)
    where = f"{ref.repo_id}@{commit[:12]}"
    if entry is None:
        raise NotFoundError(
            f"{where}: no {PUBLISHED_MANIFEST}: not a hubrelease release (nothing pins its files)",
            repo_id=ref.repo_id,
        )
    if entry.size > MANIFEST_MAX:
        raise InputError(f"{where}: {PUBLISHED_MANIFEST} is {entry.size:,} bytes, over {MANIFEST_MAX:,}")
    data = read_checked(api, ref.repo_id, commit, repo_type, entry)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{where}: {PUBLISHED_MANIFEST} is not UTF-8 text") from None
    try:
        manifest = load_manifest_text(text, f"{where}:{PUBLISHED_MANIFEST}")
    except HubReleaseError as exc:
        raise InputError(f"the published manifest does not load: {exc}") from None
    return Published(ref.repo_id, repo_type, revision, commit, files, manifest, text)
