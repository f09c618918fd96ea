"""``hubrelease checksums`` as one library call: the manifest's digests as a ``sha256sum -c`` file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hubrelease.errors import InputError
from hubrelease.fsutil import atomic_write_text
from hubrelease.hashing import format_sums
from hubrelease.manifest import load_manifest


@dataclass(frozen=True)
class Checksums:
    """The ``sha256sum`` text and how many files it lists."""

    text: str
    count: int


def release_checksums(manifest: Path, out: Path | None = None) -> Checksums:
    """A line per artifact and evaluation file (paths relative to the release folder), written
    atomically to ``out`` when given; an artifact without a sha256 is an input error."""
    release = load_manifest(manifest)
    unpinned = [a.path for a in release.artifacts if a.sha256 is None]
    if unpinned:
        raise InputError(f"artifact {unpinned[0]} has no sha256 to write", path=manifest, field="artifacts")
    # Evaluation files are the source of every number in the card: their digests belong here too.
    pinned = [(a.local_path, a.sha256) for a in release.artifacts if a.sha256 is not None]
    pinned += [(e.path, e.sha256) for e in release.evaluation_files if e.sha256 is not None]
    text = format_sums(pinned)
    if out is not None:
        atomic_write_text(out, text)
    return Checksums(text, len(pinned))
