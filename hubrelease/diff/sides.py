"""One side of a diff: a local manifest (its release folder) or ``REPO@REV`` as published, read alike.

Both give the manifest, the bytes of small files (evaluation JSON) and a file's architecture from its
header: locally from the file, on the Hub with range requests at the commit (no weights downloaded).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from hubrelease.errors import InputError, NotFoundError
from hubrelease.formats.architecture import Architecture, local_architecture
from hubrelease.hub.download import read_checked
from hubrelease.hub.remote_headers import RemoteRepo, remote_architecture
from hubrelease.manifest import load_manifest, release_root
from hubrelease.manifest.models import Manifest
from hubrelease.pull.resolve import Published, parse_ref, read_published

if TYPE_CHECKING:
    from huggingface_hub import HfApi


class Side(Protocol):
    @property
    def label(self) -> str: ...

    @property
    def manifest(self) -> Manifest: ...

    def read(self, path: str) -> bytes: ...

    def architecture(self, path: str) -> Architecture: ...


@dataclass(frozen=True)
class LocalSide:
    label: str
    manifest: Manifest
    root: Path

    def _local(self, path: str) -> Path:
        artifact = self.manifest.artifact(path)
        return self.root / (artifact.local_path if artifact is not None else path)

    def read(self, path: str) -> bytes:
        return self._local(path).read_bytes()

    def architecture(self, path: str) -> Architecture:
        return local_architecture(self._local(path))


@dataclass(frozen=True)
class HubSide:
    label: str
    manifest: Manifest
    api: HfApi
    published: Published

    def read(self, path: str) -> bytes:
        entry = self.published.files.get(path)
        if entry is None:
            raise NotFoundError(f"{self.label}: {path}: not on the Hub", repo_id=self.published.repo_id)
        p = self.published
        return read_checked(self.api, p.repo_id, p.commit, p.repo_type, entry)

    def architecture(self, path: str) -> Architecture:
        p = self.published
        return remote_architecture(RemoteRepo(self.api, p.repo_id, p.commit, p.repo_type), path)


def is_local(spec: str) -> bool:
    """A path that exists, or one that names a YAML file, is a local manifest; anything else is ``REPO@REV``."""
    return Path(spec).exists() or spec.endswith((".yaml", ".yml"))


def local_side(spec: str) -> LocalSide:
    path = Path(spec)
    if not path.is_file():
        raise InputError("manifest not found", path=path)
    manifest = load_manifest(path)
    return LocalSide(str(path), manifest, release_root(manifest, path))


def hub_side(api: HfApi, spec: str) -> HubSide:
    published = read_published(api, parse_ref(spec))
    return HubSide(published.label, published.manifest, api, published)


def published_of(api: HfApi, local: LocalSide) -> HubSide:
    """The release a local one follows: the one it supersedes (``release.supersedes``, pinned), else what its
    manifest publishes to (``release.repo_id`` at ``release.revision``)."""
    release = local.manifest.release
    return hub_side(api, release.supersedes or f"{release.repo_id}@{release.revision}")


def side(api: HfApi | None, spec: str) -> Side:
    """``spec`` as a local manifest, else as ``REPO@REV`` read through ``api``."""
    if is_local(spec):
        return local_side(spec)
    if api is None:
        raise InputError(f"{spec!r} is on the Hub: a Hub client is needed")
    return hub_side(api, spec)
