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
    from hubrelease.verify.checksums import release_checksums

    sums = release_checksums(manifest, out)
    if out is None:
        output.stdout.out(sums.text, end="", highlight=False)
    else:
        output.info_line(f"wrote {sums.count} checksums to {out}")


def register(app: typer.Typer) -> None:
    app.command("checksums", epilog=EXAMPLES)(checksums)
