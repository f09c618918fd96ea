"""`hubrelease lock`: pin branches and tags to commits; fill pinned sizes and sha256s from the Hub."""

from __future__ import annotations

from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import EndpointOpt, JsonOpt, ManifestArg, QuietOpt, TokenOpt, hub_session

EXAMPLES = """
Examples:

  hubrelease lock hubrelease.yaml                 # targets: revision main -> 40-hex commit, sizes, sha256

  hubrelease lock hubrelease.yaml --dry-run --json

Nothing is downloaded: commits come from repo info, sizes and sha256 from paths-info, header pins of
GGUF / safetensors files (header_sha256, composition) from range reads of their headers.
Existing values are never overwritten; a disagreement with the Hub exits 1 and names the field.

Exit codes: 0 locked (or already locked), 1 the Hub disagrees with a pinned value, 2 invalid input or
a missing repo or revision, 4 the Hub could not be reached or refused us.
"""


def lock(
    manifest: ManifestArg,
    endpoint: EndpointOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would change; write nothing.")
    ] = False,
    json_mode: JsonOpt = False,
    token: TokenOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Resolve each pin's branch or tag to a commit and fill file sizes and sha256 (comments are kept)."""
    from hubrelease.hub import lock_manifest

    result = lock_manifest(manifest, hub_session(endpoint, token, quiet), dry_run=dry_run)
    if json_mode:
        output.emit_json(
            {
                "schema_version": 1,
                "command": "lock",
                "manifest": str(manifest),
                "written": result.written,
                "changes": [c.to_dict() for c in result.changes],
                "size_only": list(result.size_only),
                "no_header_pin": list(result.no_header_pin),
            }
        )
        return
    for change in result.changes:
        old = "(absent)" if change.old is None else change.old
        output.stdout.print(f"{change.pin}: {change.field} {old} -> {change.new}", markup=False)
    for label in result.size_only:
        output.warn_line(f"{label}: regular file on the Hub, no sha256 without downloading; size pinned")
    for line in result.no_header_pin:
        output.warn_line(f"{line}; no header pin")
    if not result.changes:
        output.info_line("already locked: nothing to change")
    elif result.written:
        output.info_line(f"locked {len(result.changes)} value(s) in {manifest}")
    else:
        output.info_line(f"dry run: {len(result.changes)} value(s) would change")


def register(app: typer.Typer) -> None:
    app.command("lock", epilog=EXAMPLES)(lock)
