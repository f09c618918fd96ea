"""Where a manifest's release folder is: ``--dir``, else the manifest's ``root:``, else its own folder.

One rule for every command (verify, push, render-card, add, checksums, build --manifest), so a
manifest written outside its folder (``init DIR --out OUTSIDE.yaml`` records ``root:``) never has
its files looked up beside it.
"""

from __future__ import annotations

import os
from pathlib import Path

from hubrelease.manifest.models import Manifest


def release_root(manifest: Manifest, manifest_path: Path, override: Path | None = None) -> Path:
    """The release folder of ``manifest`` (loaded from ``manifest_path``); ``override`` is ``--dir``."""
    if override is not None:
        return override
    if manifest.root is None:
        return manifest_path.parent
    return manifest_path.parent / manifest.root


def root_value(folder: Path, manifest_path: Path) -> str | None:
    """What ``root:`` must say for ``folder`` when the manifest is written to ``manifest_path`` (None: same folder)."""
    relative = Path(os.path.relpath(folder.resolve(), manifest_path.resolve().parent)).as_posix()
    return None if relative == "." else relative
