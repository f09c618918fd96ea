"""`hubrelease checksums`: write the manifest's digests in ``sha256sum -c`` format."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import ManifestArg

EXAMPLES = """
Examples:

  hubrelease checksums hubrelease.yaml > SHA256SUMS && sha256sum -c SHA256SUMS

  hubrelease checksums hubrelease.yaml --out SHA256SUMS
"""


def checksums(
    manifest: ManifestArg,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write to this file (atomically) instead of stdout.")
    ] = None,
) -> None:
    """Print `sha256sum -c` lines for every artifact with a pinned digest (paths relative to the release folder)."""
    from hubrelease.errors import InputError
    from hubrelease.fsutil import atomic_write_text
    from hubrelease.hashing import format_sums
    from hubrelease.manifest import load_manifest

    release = load_manifest(manifest)
    unpinned = [a.path for a in release.artifacts if a.sha256 is None]
    if unpinned:
        raise InputError(f"artifact {unpinned[0]} has no sha256 to write", path=manifest, field="artifacts")
    # Evaluation files are the source of every number in the card: their digests belong here too.
    pinned = [(a.local_path, a.sha256) for a in release.artifacts if a.sha256 is not None]
    pinned += [(e.path, e.sha256) for e in release.evaluation_files if e.sha256 is not None]
    text = format_sums(pinned)
    if out is None:
        output.stdout.out(text, end="", highlight=False)
    else:
        atomic_write_text(out, text)
        output.info_line(f"wrote {len(pinned)} checksums to {out}")


def register(app: typer.Typer) -> None:
    app.command("checksums", epilog=EXAMPLES)(checksums)
