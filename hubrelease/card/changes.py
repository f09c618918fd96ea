"""The card's "Changes since REV" section, read from a pinned file so render-card and verify stay offline.

``hubrelease diff MANIFEST --record`` compares the release with the one it supersedes
(``release.supersedes``) on the Hub and writes ``changes.json`` into the release folder, pinned as an
artifact. The card renders from those bytes only: a file whose digest is not the pinned one, or that
records changes since another release than ``release.supersedes``, is refused, so the section cannot
drift from the pins.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hubrelease.errors import InputError
from hubrelease.manifest.models import Manifest

CHANGES_FILE = "changes.json"
"""Where ``diff --record`` writes the changes and the card reads them (a release-folder path)."""


@dataclass(frozen=True)
class ChangeRow:
    section: str
    subject: str
    detail: str


@dataclass(frozen=True)
class ChangesSince:
    """What changed since the superseded release, as ``diff`` found it."""

    since: str
    """``REPO@COMMIT`` of the superseded release (``release.supersedes``)."""
    rows: tuple[ChangeRow, ...]


def changes_document(since: str, changes: list[dict[str, Any]]) -> bytes:
    """The bytes ``diff --record`` writes: stable key order, so the same diff pins the same digest."""
    return (json.dumps({"since": since, "changes": changes}, indent=2, sort_keys=True) + "\n").encode()


def changes_since(manifest: Manifest, release_dir: Path) -> ChangesSince | None:
    """The recorded changes, or None when the release supersedes none or has not recorded them."""
    since = manifest.release.supersedes
    artifact = manifest.artifact(CHANGES_FILE)
    if since is None or artifact is None:
        return None
    path = release_dir / artifact.local_path
    redo = "run `hubrelease diff MANIFEST --record` again"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(
            f"{CHANGES_FILE} is listed but not readable ({exc.strerror}): {redo}", path=path
        ) from None
    if artifact.sha256 is None or hashlib.sha256(data).hexdigest() != artifact.sha256:
        raise InputError(f"{CHANGES_FILE} is not the file the manifest pins: {redo}", path=path)
    try:
        document = json.loads(data)
        recorded, changes = document["since"], document["changes"]
        rows = tuple(ChangeRow(str(c["section"]), str(c["subject"]), str(c["detail"])) for c in changes)
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{CHANGES_FILE} is not a changes record ({exc}): {redo}", path=path) from None
    if recorded != since:
        raise InputError(
            f"{CHANGES_FILE} records changes since {recorded}, but release.supersedes is {since}: {redo}",
            path=path,
        )
    return ChangesSince(since, rows)
