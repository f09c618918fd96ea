"""Files added, removed and changed between two releases, by size and digest: what `pull --check` and
`diff` both report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Literal

from hubrelease.hub.metadata import RemoteFile
from hubrelease.manifest.models import Manifest

FileFacts = tuple[int | None, str | None]
"""(size, digest): a sha256, or ``git:<blob id>`` for a regular file the Hub lists without one."""


@dataclass(frozen=True)
class FileChange:
    change: Literal["added", "removed", "changed"]
    path: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def manifest_files(manifest: Manifest) -> dict[str, FileFacts]:
    """What a manifest pins: its artifacts and evaluation files."""
    files: dict[str, FileFacts] = {a.path: (a.size, a.sha256) for a in manifest.artifacts}
    files.update((e.path, (e.size, e.sha256)) for e in manifest.evaluation_files)
    return files


def listed_files(listing: Mapping[str, RemoteFile]) -> dict[str, FileFacts]:
    """What the Hub lists at a commit."""
    return {path: (e.size, e.sha256 or f"git:{e.blob_id}") for path, e in listing.items()}


def _facts(facts: FileFacts) -> str:
    size, digest = facts
    return f"{'?' if size is None else size} bytes, {digest or 'no digest'}"


def file_changes(old: Mapping[str, FileFacts], new: Mapping[str, FileFacts]) -> list[FileChange]:
    """Every path whose size or digest differs, in path order."""
    changes = []
    for path in sorted(old.keys() | new.keys()):
        before, after = old.get(path), new.get(path)
        if before is None and after is not None:
            changes.append(FileChange("added", path, _facts(after)))
        elif after is None and before is not None:
            changes.append(FileChange("removed", path, _facts(before)))
        elif before != after and before is not None and after is not None:
            changes.append(FileChange("changed", path, f"{_facts(before)} -> {_facts(after)}"))
    return changes
