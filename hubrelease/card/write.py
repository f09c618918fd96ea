"""``hubrelease render-card`` as one library call: render the card, then write it (charts first,
pinned) or only compare it with the one on disk."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hubrelease.card.marker import is_generated
from hubrelease.card.render import CardCheck, check_card, hand_written_status, pin_charts
from hubrelease.errors import CheckFailed, InputError
from hubrelease.fsutil import atomic_write_bytes, atomic_write_text
from hubrelease.manifest import load_manifest


@dataclass(frozen=True)
class CardResult:
    """Where the card is and how it stands: ``current``, ``stale`` or ``missing`` when only
    compared; ``unchanged`` or ``written`` when written."""

    manifest: Path
    path: str
    status: str
    check: CardCheck | None = None
    """The render compared with the disk; None for a hand-written card (``card.template: none``)."""

    def raise_if_stale(self) -> None:
        """Raise ``CheckFailed`` (exit 1) unless the card on disk is current."""
        if self.check is not None:
            self.check.raise_if_stale()
        elif self.status != "current":
            raise CheckFailed(f"{self.path} does not match card.size / card.sha256", path=self.manifest)


def write_card(
    manifest: Path,
    *,
    out: Path | None = None,
    root: Path | None = None,
    write: bool = True,
    force: bool = False,
) -> CardResult:
    """Render the card from the manifest and evaluation files and, with ``write``, write it to
    ``out`` (default ``card.output``). A card render-card did not write is replaced only with
    ``force``; a hand-written card is never rendered, only compared with its pins."""
    release = load_manifest(manifest)
    if release.card is not None and release.card.hand_written:
        if write:
            raise InputError(
                f"card.template is none: {release.card.output} is hand-written and pinned, never rendered; "
                "`hubrelease add` re-pins it after an edit",
                path=manifest,
            )
        return CardResult(manifest, release.card.output, hand_written_status(release, manifest, root))
    result = check_card(manifest, out, root=root)
    if not write:
        status = "current" if result.current else ("missing" if result.actual is None else "stale")
        return CardResult(manifest, str(result.path), status, result)
    if result.current:
        return CardResult(manifest, str(result.path), "unchanged", result)
    if result.actual is not None and not is_generated(result.actual) and not force:
        raise InputError(
            "was not written by render-card; pass --force to replace it, or keep it as the card "
            "with card.template: none",
            path=result.path,
        )
    result = _write_charts(manifest, out, root, result)
    atomic_write_text(result.path, result.expected)
    return CardResult(manifest, str(result.path), "written", result)


def _write_charts(manifest: Path, out: Path | None, root: Path | None, result: CardCheck) -> CardCheck:
    """Write the charts that differ, pin them, and re-render the card that lists their pins."""
    rendered = result.rendered
    if rendered is None or not result.stale_charts:
        return result
    for chart in rendered.charts:
        if chart.path in result.stale_charts:
            chart.file.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(chart.file, chart.svg)
    if rendered.unpinned:
        pin_charts(manifest, rendered)
        return check_card(manifest, out, root=root)
    return result
