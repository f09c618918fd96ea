"""Verify a manifest file, reusing the plan made from the same bytes last time.

A warm ``verify`` (every digest from the stat cache) is otherwise mostly fixed cost: importing
pydantic and the manifest models, parsing and validating the YAML. The plan (release folder,
expected files with their pins, known and ignored names) is a pure function of the manifest's
bytes, its path, ``--dir`` and this code, so it is stored under the manifest's ``.hubrelease/``
keyed on the path and ``--dir``, with the manifest's text and the code's identity beside it, and
reused only while both are exactly what they were (bench/startup_bench.py). The text is compared in
full rather than through a digest: as exact, and a warm verify then never loads hashlib (OpenSSL).
An edit or an upgrade replaces the plan of that manifest. Any other
state (a different manifest, an edited byte, another hubrelease) misses and validates again;
``--no-cache`` never reads or writes it. A manifest with ``lint: true`` artifacts or evaluation
files is loaded anyway (lint and the provenance check need it), but its plan is reused all the
same: the card is not rendered again. A rendered card is expected by the digest of its render, which the
plan holds only when that render read nothing but the manifest, this code and evaluation files that
matched their pins (``VerifyPlan.cacheable``); otherwise the plan is made afresh each time. Like the stat cache, ``.hubrelease/`` is local state the user's
own tools write; a cache that cannot be read is ignored, never trusted.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from hubrelease import __version__
from hubrelease.fsutil import STATE_DIR, atomic_write_text
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.verify.compare import Expected
from hubrelease.verify.findings import VerifyReport
from hubrelease.verify.local import VerifyOptions, VerifyPlan, verify_manifest, verify_plan

CACHE_NAME = "verify-plans.json"
_FORMAT = "hubrelease-verify-plans-4"
_KEEP = 8  # plans kept per folder (a few manifests, or --dir variants, side by side)
# The code that turns a manifest into a plan (the card's render included: its digest is in the plan):
# an edited checkout must not reuse plans of the old code. Folders count with every file in them.
_PLAN_CODE = (
    "manifest/models.py",
    "manifest/load.py",
    "manifest/root.py",
    "manifest/editor.py",
    "release_files.py",
    "verify/local.py",
    "verify/expected.py",
    "card",
    "evaluation",
    "templates",
)


def _key(manifest_path: Path, root: Path | None) -> str:
    """Which manifest, verified where: one plan each."""
    return json.dumps([str(manifest_path.resolve()), str(root) if root else None])


def _code() -> list[object]:
    """The identity of the code that made a plan (as it reads back from JSON)."""
    package = Path(__file__).resolve().parents[1]
    identity: list[object] = [__version__]
    for name in _PLAN_CODE:
        path = package / name
        if name.endswith(".py"):
            identity.append([name, os.stat(path).st_mtime_ns])
            continue
        with os.scandir(path) as entries:  # templates/ is a symlink: scandir follows it
            identity.extend(
                sorted([f"{name}/{e.name}", e.stat().st_mtime_ns] for e in entries if e.is_file())
            )
    return identity


def _cache_file(manifest_path: Path) -> Path:
    return manifest_path.resolve().parent / STATE_DIR / CACHE_NAME


def _read(path: Path) -> dict[str, Any]:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) and stored.get("format") == _FORMAT else {}


def load_plan(manifest_path: Path, text: str, root: Path | None) -> VerifyPlan | None:
    """The plan stored for this exact manifest text, path and ``--dir`` by this code, if any."""
    entry = _read(_cache_file(manifest_path)).get("plans", {}).get(_key(manifest_path, root))
    if not isinstance(entry, dict) or entry.get("manifest") != text or entry.get("code") != _code():
        return None
    try:
        plan = VerifyPlan(
            Path(entry["folder"]),
            tuple(map(Expected._make, entry["expected"])),  # a row of another length: TypeError
            tuple(Path(p) for p in entry["known"]),
            tuple(str(p) for p in entry["ignore"]),
            absent=tuple(str(p) for p in entry["absent"]),
            needs_manifest=entry["needs_manifest"] is True,
        )
    except (KeyError, TypeError, ValueError):
        return None
    # A card that appeared since (no `card:` section: README.md is published when present) re-plans.
    return None if any(os.path.lexists(plan.folder / name) for name in plan.absent) else plan


def store_plan(manifest_path: Path, text: str, root: Path | None, plan: VerifyPlan) -> None:
    """Remember ``plan`` for this text (best effort: a read-only folder just means no cache)."""
    path = _cache_file(manifest_path)
    key = _key(manifest_path, root)
    plans = _read(path).get("plans", {})
    plans = {k: v for k, v in plans.items() if k != key} if isinstance(plans, dict) else {}
    plans = dict(list(plans.items())[-(_KEEP - 1) :])
    plans[key] = {
        "manifest": text,
        "code": _code(),
        "folder": str(plan.folder),
        "expected": [list(e) for e in plan.expected],
        "known": [str(p) for p in plan.known],
        "ignore": list(plan.ignore),
        "absent": list(plan.absent),
        "needs_manifest": plan.needs_manifest,
    }
    with contextlib.suppress(OSError):
        path.parent.mkdir(exist_ok=True)
        atomic_write_text(path, json.dumps({"format": _FORMAT, "plans": plans}, separators=(",", ":")))


def verify_manifest_file(
    manifest_path: Path,
    text: str,
    root: Path | None = None,
    options: VerifyOptions = VerifyOptions(),
    progress: Progress = NULL_PROGRESS,
) -> VerifyReport:
    """Verify against the manifest whose content is ``text`` (read from ``manifest_path``)."""
    plan = load_plan(manifest_path, text, root) if options.use_cache else None
    manifest = None
    if plan is None:
        from hubrelease.manifest import load_manifest_text
        from hubrelease.verify.local import plan_manifest

        manifest = load_manifest_text(text, manifest_path)
        plan = plan_manifest(manifest, manifest_path, root)
        if options.use_cache and plan.cacheable:
            store_plan(manifest_path, text, root, plan)
    if not plan.needs_manifest:
        return verify_plan(plan, options, progress)
    if manifest is None:  # lint and provenance read the manifest; the plan (the card's digest) is kept
        from hubrelease.manifest import load_manifest_text

        manifest = load_manifest_text(text, manifest_path)
    return verify_manifest(manifest, manifest_path, root, options, progress, plan=plan)
