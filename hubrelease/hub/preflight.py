"""What must hold before a push may start: pinned revisions, local verify, lint, a current card.

Every check runs before the first request to the Hub, so a push that would publish a broken or
mislabelled release fails on the laptop, not halfway through an upload.
"""

from __future__ import annotations

import re
from pathlib import Path

from hubrelease.card import check_card
from hubrelease.errors import CheckFailed
from hubrelease.lint import lint_file
from hubrelease.manifest.models import Manifest
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.verify import verify_manifest

_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def unpinned_revisions(manifest: Manifest) -> list[str]:
    """Pins whose revision is not a commit (a branch, a tag or nothing)."""
    pins = [(p.repo_id, p.revision) for p in [*manifest.pins.targets, *manifest.pins.base_drafters]]
    pins += [(d.repo_id, d.revision) for d in manifest.pins.datasets]
    return [f"{repo}@{rev or '?'}" for repo, rev in pins if not (rev and _COMMIT.match(rev))]


def preflight(
    manifest: Manifest, manifest_path: Path, root: Path, progress: Progress = NULL_PROGRESS
) -> None:
    """Raise ``CheckFailed`` (exit 1) naming the first reason this release must not be pushed."""
    unpinned = unpinned_revisions(manifest)
    if unpinned:
        raise CheckFailed(
            f"unpinned revision(s): {', '.join(unpinned)}; run `hubrelease lock` first",
            path=manifest_path,
            field="pins",
        )
    report = verify_manifest(manifest, manifest_path, root, progress=progress)
    if report.has_drift:
        first = report.errors[0]
        raise CheckFailed(
            f"local verify found {len(report.errors)} problem(s), first: {first.path}: {first.message}; "
            "run `hubrelease verify`",
            path=manifest_path,
        )
    for artifact in manifest.artifacts:
        if not artifact.lint:
            continue
        config = root / artifact.lint_config if artifact.lint_config else None
        errors = [
            f
            for f in lint_file(root / artifact.local_path, config, artifact.composition)
            if f.severity == "error"
        ]
        if errors:
            raise CheckFailed(f"lint: {errors[0].rule_id}: {errors[0].message}", path=artifact.path)
    if manifest.card is not None:
        check_card(manifest_path).raise_if_stale()
