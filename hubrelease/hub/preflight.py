"""What must hold before a push may start: pinned revisions, local verify, lint, a current card.

Every check runs before the first request to the Hub, so a push that would publish a broken or
mislabelled release fails on the laptop, not halfway through an upload.
"""

from __future__ import annotations

from pathlib import Path

from hubrelease.card import check_card
from hubrelease.card.marker import is_generated
from hubrelease.errors import CheckFailed
from hubrelease.lint import lint_file
from hubrelease.manifest.models import Manifest, PinnedDataset, PinnedRepo
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.revisions import is_commit
from hubrelease.verify import verify_manifest


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
    _check_card(manifest, manifest_path, root)


def _check_card(manifest: Manifest, manifest_path: Path, root: Path) -> None:
    """A rendered card must be current; a hand-written one was verified by digest above.

    Without a ``card:`` section a README.md is published only if render-card wrote it (then it must
    be current) or it is pinned as an artifact: an unpinned hand-written card is not published.
    """
    card = manifest.card
    if card is not None and card.hand_written:
        return
    if card is None:
        readme = root / manifest.card_output
        if not readme.is_file() or manifest.artifact(manifest.card_output) is not None:
            return
        if not is_generated(readme.read_text(encoding="utf-8", errors="replace")):
            raise CheckFailed(
                f"{manifest.card_output} is neither rendered by render-card nor pinned; keep it as the card "
                f"with `card: {{template: none}}` and `hubrelease add {manifest_path} {readme}`",
                path=manifest_path,
            )
    check_card(manifest_path, root=root).raise_if_stale()
