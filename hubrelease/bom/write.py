"""``hubrelease bom`` as one library call: the BOM text, validated, then written, checked or recorded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hubrelease.bom.document import bom_text, release_bom
from hubrelease.bom.validate import validate_bom
from hubrelease.errors import CheckFailed, InputError
from hubrelease.fsutil import atomic_write_text, relative_inside
from hubrelease.hashing import sha256_file
from hubrelease.manifest import load_manifest, release_root
from hubrelease.manifest.record import ArtifactRecorder


@dataclass(frozen=True)
class BomResult:
    """The BOM's text and what was done with it."""

    text: str
    action: Literal["shown", "written", "current"]
    """``shown``: no file given (the caller prints it); ``current``: ``check`` found it up to date."""


def write_bom(
    manifest: Path,
    *,
    out: Path | None = None,
    directory: Path | None = None,
    add: bool = False,
    check: bool = False,
) -> BomResult:
    """Build and validate the release's BOM; write it to ``out`` (and with ``add``, record it as an
    artifact), or with ``check`` raise ``CheckFailed`` when ``out`` is not that BOM."""
    if (add or check) and out is None:
        raise InputError("--add and --check need --out FILE")
    release = load_manifest(manifest)
    root = release_root(release, manifest, directory)
    inside = relative_inside(out, root.resolve()) if out is not None else None
    recorder = ArtifactRecorder.prepare(manifest, out) if add and out is not None else None
    text = bom_text(release_bom(release, root, skip={inside} if inside else set()))
    validate_bom(text)
    if out is None:
        return BomResult(text, "shown")
    if check:
        if not out.is_file() or out.read_text(encoding="utf-8") != text:
            raise CheckFailed(f"{out} is not the BOM of {manifest}: run `hubrelease bom {manifest} -o {out}`")
        return BomResult(text, "current")
    atomic_write_text(out, text)
    if recorder is not None:
        entry = {
            "size": out.stat().st_size,
            "sha256": sha256_file(out),
            "role": "doc",
            "description": "CycloneDX ML-BOM",
        }
        recorder.record([(out, entry)])
    return BomResult(text, "written")
