"""What must hold before a push may start: pinned revisions, local verify, lint, a current card,
licences, then the pins on the Hub.

``preflight`` runs before the first request to the Hub, so a push that would publish a broken or
mislabelled release fails on the laptop, not halfway through an upload. ``check_pins`` runs next,
before anything is written (no repo, branch or commit created): a release pinned to a repo,
revision or file the Hub does not hold as pinned is refused, not published and reported after.
"""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import HfApi

from hubrelease.errors import CheckFailed
from hubrelease.findings import Finding
from hubrelease.hub.remote_verify import pin_findings
from hubrelease.lint import lint_file
from hubrelease.lint.licenses import license_findings
from hubrelease.lint.target import cached_target
from hubrelease.manifest.models import Manifest, PinnedDataset, PinnedRepo
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.revisions import is_commit
from hubrelease.verify import verify_manifest

_SHOWN = 3  # problems named in the one-line refusal; --json of `verify --remote` lists all


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
    manifest: Manifest, manifest_path: Path, root: Path, progress: Progress = NULL_PROGRESS
) -> None:
    """Raise ``CheckFailed`` (exit 1) naming the first reason this release must not be pushed."""
    unpinned = unpinned_revisions(manifest)
    if unpinned:
        raise CheckFailed(
            f"unpinned revision(s): {', '.join(unpinned)}; run `hubrelease lock` first, or mark a pin "
            "that has no commit to record with unpinned: true",
            path=manifest_path,
            field="pins",
        )
    # Verify checks every file push publishes: the card against a fresh render, the manifest's copy.
    report = verify_manifest(manifest, manifest_path, root, progress=progress)
    if report.has_drift:
        first = report.errors[0]
        rendered = manifest.card is None or not manifest.card.hand_written
        stale_card = rendered and first.path == manifest.card_output and first.kind != "unpinned"
        fix = "run `hubrelease render-card`" if stale_card else "run `hubrelease verify`"
        raise CheckFailed(
            f"local verify found {len(report.errors)} problem(s), first: {first.path}: {first.message}; {fix}",
            path=manifest_path,
        )
    target = cached_target(manifest, root)
    for artifact in manifest.artifacts:
        if not artifact.lint:
            continue
        config = root / artifact.lint_config if artifact.lint_config else None
        errors = [
            f
            for f in lint_file(root / artifact.local_path, config, artifact.composition, target)
            if f.severity == "error"
        ]
        if errors:
            raise CheckFailed(f"lint: {errors[0].rule_id}: {errors[0].message}", path=artifact.path)
    conflicts = [f for f in license_findings(manifest) if f.severity == "error"]
    if conflicts:
        raise CheckFailed(f"lint: license: {conflicts[0].message}", path=manifest_path, field="pins")


def check_pins(api: HfApi, manifest: Manifest) -> None:
    """Raise ``CheckFailed`` (exit 1) unless every pin is on the Hub as pinned: repo, revision, files, sizes.

    The same check ``verify --remote`` makes of the pins (``tree.pin_findings``: digests and header
    pins too), made before the push writes anything; unpinned pins are checked at their branch head.
    """
    errors = [f for f in pin_findings(api, manifest) if f.severity == "error"]
    if not errors:
        return
    named = "; ".join(f"{f.path}: {f.message}" for f in errors[:_SHOWN])
    if len(errors) > _SHOWN:
        named += f"; and {len(errors) - _SHOWN} more"
    raise CheckFailed(
        f"{len(errors)} pin(s) not on the Hub as pinned: {named}; {_fix(errors[0])}; nothing was pushed",
        field="pins",
    )


def _fix(finding: Finding) -> str:
    """What to do about the first problem, in the manifest's terms."""
    if finding.kind == "revision_missing":
        return (
            "publish that repo first, or correct the pin's repo_id / revision (`hubrelease lock` "
            "records the commit a branch points to)"
        )
    if finding.kind == "missing":
        return "correct the file's path in the pin, or remove the file from the pin"
    return (
        "the repo no longer holds the pinned bytes: pin the revision that was measured, or re-pin "
        "deliberately (remove the stale size / sha256 / header pin, then `hubrelease lock`)"
    )
