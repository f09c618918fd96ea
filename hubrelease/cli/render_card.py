"""`hubrelease render-card`: write the model or dataset card, or check the one on disk (CI gate)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import DirOpt, JsonOpt, ManifestArg

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
    from hubrelease.card.write import write_card

    checking = check or diff
    result = write_card(manifest, out=out, root=directory, write=not checking, force=force)
    card = result.check
    if json_mode:
        extra: dict[str, object] = {}
        if card is not None:
            data = card.expected.encode("utf-8")
            import hashlib

            extra = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "diff": card.diff()}
        output.emit_document(None, manifest=str(manifest), path=result.path, status=result.status, **extra)
    elif card is None:
        output.info_line(f"{result.path}: {result.status} (hand-written, pinned by sha256)")
    else:
        if diff and not card.current:
            output.stdout.out(card.diff(), end="", highlight=False)
        output.info_line(f"{result.path}: {result.status}")
    if check or (checking and card is None):  # --diff alone fails only a hand-written card
        result.raise_if_stale()


def register(app: typer.Typer) -> None:
    app.command("render-card", epilog=EXAMPLES)(render_card)
