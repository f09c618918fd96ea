"""`hubrelease render-card`: write the model or dataset card, or check the one on disk (CI gate)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import DirOpt, JsonOpt, ManifestArg

if TYPE_CHECKING:
    from hubrelease.card import CardCheck
    from hubrelease.manifest import Manifest

EXAMPLES = """
Examples:

  hubrelease render-card manifests/ornith-1.5-dflash2/hubrelease.yaml

  # CI gate: exit 1 and show what changed when README.md is stale
  hubrelease render-card hubrelease.yaml --check --diff

  hubrelease render-card hubrelease.yaml --out /tmp/README.md --json

  hubrelease render-card hubrelease.yaml --force   # replace a README.md render-card did not write

A card render-card did not write (it has no generated-by line) is never replaced without --force;
to publish a hand-written card instead, set card.template: none and `hubrelease add` it.
"""


def _payload(result: CardCheck, manifest: Path, status: str) -> dict[str, object]:
    import hashlib

    data = result.expected.encode("utf-8")
    return output.document(
        None,
        manifest=str(manifest),
        path=str(result.path),
        status=status,
        bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        diff=result.diff(),
    )


def render_card(
    manifest: ManifestArg,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Card file (default: card.output in the release folder)."),
    ] = None,
    check: Annotated[
        bool,
        typer.Option("--check", help="Do not write; exit 1 if the card on disk differs from a fresh render."),
    ] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Do not write; print a unified diff from disk to render.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a card file that render-card did not write.")
    ] = False,
    *,
    directory: DirOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Render the card from the manifest and evaluation files (same inputs, same bytes)."""
    from hubrelease.card import check_card
    from hubrelease.card.marker import is_generated
    from hubrelease.errors import InputError
    from hubrelease.fsutil import atomic_write_text
    from hubrelease.manifest import load_manifest

    release = load_manifest(manifest)
    if release.card is not None and release.card.hand_written:
        _hand_written(release, manifest, directory, check or diff, json_mode)
        return
    result = check_card(manifest, out, root=directory)
    if check or diff:
        status = "current" if result.current else ("missing" if result.actual is None else "stale")
    else:
        status = "unchanged" if result.current else "written"
        if not result.current:
            if result.actual is not None and not is_generated(result.actual) and not force:
                raise InputError(
                    "was not written by render-card; pass --force to replace it, or keep it as the card "
                    "with card.template: none",
                    path=result.path,
                )
            result = _write_charts(manifest, out, directory, result)
            atomic_write_text(result.path, result.expected)
    if json_mode:
        output.emit_json(_payload(result, manifest, status))
    else:
        if diff and not result.current:
            output.stdout.out(result.diff(), end="", highlight=False)
        output.info_line(f"{result.path}: {status}")
    if check:
        result.raise_if_stale()


def _write_charts(manifest: Path, out: Path | None, directory: Path | None, result: CardCheck) -> CardCheck:
    """Write the charts that differ, pin them, and re-render the card that lists their pins."""
    from hubrelease.card import check_card
    from hubrelease.card.render import pin_charts
    from hubrelease.fsutil import atomic_write_bytes

    rendered = result.rendered
    if rendered is None or not result.stale_charts:
        return result
    for chart in rendered.charts:
        if chart.path in result.stale_charts:
            chart.file.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(chart.file, chart.svg)
    if rendered.unpinned:
        pin_charts(manifest, rendered)
        return check_card(manifest, out, root=directory)
    return result


def _hand_written(
    release: Manifest, manifest: Path, directory: Path | None, checking: bool, json_mode: bool
) -> None:
    """``card.template: none``: nothing to render; ``--check`` compares the card with its pins."""
    from hubrelease.card.render import hand_written_status
    from hubrelease.errors import CheckFailed, InputError

    assert release.card is not None
    if not checking:
        raise InputError(
            f"card.template is none: {release.card.output} is hand-written and pinned, never rendered; "
            "`hubrelease add` re-pins it after an edit",
            path=manifest,
        )
    status = hand_written_status(release, manifest, directory)
    if json_mode:
        output.emit_document(None, manifest=str(manifest), path=release.card.output, status=status)
    else:
        output.info_line(f"{release.card.output}: {status} (hand-written, pinned by sha256)")
    if status != "current":
        raise CheckFailed(f"{release.card.output} does not match card.size / card.sha256", path=manifest)


def register(app: typer.Typer) -> None:
    app.command("render-card", epilog=EXAMPLES)(render_card)
