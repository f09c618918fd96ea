"""`hubrelease bom`: the release as a CycloneDX 1.6 ML-BOM, validated before it is written."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import DirOpt, ManifestArg

EXAMPLES = """
Examples:

  hubrelease bom hubrelease.yaml -o bom.cdx.json            # write (validated first)

  hubrelease bom hubrelease.yaml -o bom.cdx.json --add      # and publish it: an artifact of the release

  hubrelease bom hubrelease.yaml -o bom.cdx.json --check    # CI: exit 1 when the file is stale

Needs the optional extra: pip install 'hubrelease[bom]' (cyclonedx-python-lib, whose strict
CycloneDX 1.6 JSON schema validates every BOM). The BOM leaves out itself, the card and the
manifest (their digests would depend on the BOM's own).

Exit codes: 0 written (or --check: up to date), 1 --check: stale or missing, 2 invalid input.
"""


def bom(
    manifest: ManifestArg,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="BOM file to write (default: stdout).")
    ] = None,
    add: Annotated[
        bool,
        typer.Option("--add", help="Record the BOM as an artifact, so push publishes it in the same commit."),
    ] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Write nothing; exit 1 when OUT differs from a fresh BOM.")
    ] = False,
    directory: DirOpt = None,
) -> None:
    """Write a CycloneDX 1.6 JSON ML-BOM: files with digests, pins, engines, hardware, evaluation results
    with confidence intervals (model card), recipes (formulation)."""
    from hubrelease.bom.write import write_bom

    result = write_bom(manifest, out=out, directory=directory, add=add, check=check)
    if result.action == "shown":
        output.stdout.out(result.text, end="", highlight=False)
    elif result.action == "current":
        output.info_line(f"{out}: up to date")
    else:
        size = len(result.text.encode())
        output.info_line(f"wrote {out}: CycloneDX {size} bytes, valid against the 1.6 schema")


def register(app: typer.Typer) -> None:
    app.command("bom", epilog=EXAMPLES)(bom)
