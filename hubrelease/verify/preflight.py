"""What must hold on the laptop before a push (or a signature) may start: pinned revisions, local
verify, lint, a current card, licences.

``preflight`` runs before the first request to the Hub, so a push that would publish a broken or
mislabelled release fails on the laptop, not halfway through an upload; ``sign`` runs it too. It
reads nothing from the Hub, so it sits with verify, below both hub and signing; the pins on the Hub
are checked next (``hub.remote_verify.check_pins``).
"""

from __future__ import annotations

from pathlib import Path

from hubrelease.errors import CheckFailed
from hubrelease.lint.licenses import license_findings
from hubrelease.manifest.models import Manifest, PinnedDataset, PinnedRepo
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.revisions import is_commit
from hubrelease.verify import verify_manifest
from hubrelease.verify.local import VerifyPlan


def unpinned_revisions(manifest: Manifest) -> list[str]:
    """Pins whose revision is not a commit and that do not say so with ``unpinned: true``.

    A pin marked ``unpinned`` is published as what it is (the card states it, ``verify --remote``
    checks its sizes at the branch head); ``lock`` would record a commit nobody measured against.
    The models refuse an unmarked branch already; this guards manifests built in code.
    """
    pins: list[PinnedRepo | PinnedDataset] = [
        *manifest.pins.targets,
        *manifest.pins.base_drafters,
        *manifest.pins.datasets,
    ]
    return [
        f"{p.repo_id}@{p.revision or '?'}"
        for p in pins
        if not p.unpinned and not (p.revision and is_commit(p.revision))
    ]


def preflight(
    manifest: Manifest,
    manifest_path: Path,
    root: Path,
    progress: Progress = NULL_PROGRESS,
    *,
    plan: VerifyPlan | None = None,
) -> None:
    """Raise ``CheckFailed`` (exit 1) naming the first reason this release must not be pushed.

    ``plan``: the manifest's verify plan when already made (``verify.plan_cache``): no card render.
    """
    unpinned = unpinned_revisions(manifest)
    if unpinned:
        raise CheckFailed(
            f"unpinned revision(s): {', '.join(unpinned)}; run `hubrelease lock` first, or mark a pin "
            "that has no commit to record with unpinned: true",
            path=manifest_path,
            field="pins",
        )
    # Verify checks every file push publishes: the card against a fresh render, the manifest's copy;
    # it lints each `lint: true` artifact whose bytes verified (a lint error is drift), so the
    # drafter lint runs once here, and its format readers load only for a release that asks for it.
    report = verify_manifest(manifest, manifest_path, root, progress=progress, plan=plan)
    if report.has_drift:
        first = report.errors[0]
        rendered = manifest.card is None or not manifest.card.hand_written
        stale_card = rendered and first.path == manifest.card_output and first.kind != "unpinned"
        fix = "run `hubrelease render-card`" if stale_card else "run `hubrelease verify`"
        raise CheckFailed(
            f"local verify found {len(report.errors)} problem(s), first: {first.path}: {first.message}; {fix}",
            path=manifest_path,
        )
    conflicts = [f for f in license_findings(manifest) if f.severity == "error"]
    if conflicts:
        raise CheckFailed(f"lint: license: {conflicts[0].message}", path=manifest_path, field="pins")
