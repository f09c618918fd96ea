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
    from hubrelease.bom.document import bom_text, release_bom
    from hubrelease.bom.validate import validate_bom
    from hubrelease.errors import CheckFailed, InputError
    from hubrelease.fsutil import atomic_write_text, relative_inside
    from hubrelease.hashing import sha256_file
    from hubrelease.manifest import load_manifest, release_root
    from hubrelease.manifest.record import ArtifactRecorder

    if (add or check) and out is None:
        raise InputError("--add and --check need --out FILE")
    release = load_manifest(manifest)
    root = release_root(release, manifest, directory)
    inside = relative_inside(out, root.resolve()) if out is not None else None
    recorder = ArtifactRecorder.prepare(manifest, out) if add and out is not None else None
    text = bom_text(release_bom(release, root, skip={inside} if inside else set()))
    validate_bom(text)
    if out is None:
        output.stdout.out(text, end="", highlight=False)
        return
    if check:
        if not out.is_file() or out.read_text(encoding="utf-8") != text:
            raise CheckFailed(f"{out} is not the BOM of {manifest}: run `hubrelease bom {manifest} -o {out}`")
        output.info_line(f"{out}: up to date")
        return
    atomic_write_text(out, text)
    if recorder is not None:
        entry = {
            "size": out.stat().st_size,
            "sha256": sha256_file(out),
            "role": "doc",
            "description": "CycloneDX ML-BOM",
        }
        recorder.record([(out, entry)])
    output.info_line(f"wrote {out}: CycloneDX {len(text.encode())} bytes, valid against the 1.6 schema")


def register(app: typer.Typer) -> None:
    app.command("bom", epilog=EXAMPLES)(bom)
