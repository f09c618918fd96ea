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

  hubrelease lock hubrelease.yaml --pin acme/target   # also pin a pin marked unpinned: true

Pins marked unpinned: true are kept as they are (the manifest says no commit is to be recorded);
--pin REPO_ID converts that one (repeatable): commit, sizes and digests filled, unpinned dropped,
the comment above it removed (it explained why it was unpinned; the output shows it).
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
    pin: Annotated[
        list[str] | None,
        typer.Option(
            "--pin",
            metavar="REPO_ID",
            help="Also lock this pin although it is marked unpinned: true (repeatable).",
            show_default=False,
        ),
    ] = None,
    *,
    token: TokenOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Resolve each pin's branch or tag to a commit and fill file sizes and sha256 (comments are kept)."""
    from hubrelease.hub.lock import lock_release

    result = lock_release(manifest, hub_session(endpoint, token, quiet), dry_run=dry_run, pin=pin or ())
    for warning in result.warnings:
        output.warn_line(warning)
    if json_mode:
        output.emit_document(
            "lock",
            manifest=str(manifest),
            written=result.written,
            changes=[c.to_dict() for c in result.changes],
            size_only=list(result.size_only),
            no_header_pin=list(result.no_header_pin),
            kept_unpinned=list(result.kept_unpinned),
            removed_comments=[{"pin": pin_id, "text": text} for pin_id, text in result.removed_comments],
        )
        return
    for change in result.changes:
        if change.field == "unpinned":  # --pin: the key is dropped, not set to false
            output.value_line(f"{change.pin}: unpinned: true dropped")
            continue
        old = "(absent)" if change.old is None else change.old
        output.value_line(f"{change.pin}: {change.field} {old} -> {change.new}")
    for label in result.size_only:
        output.warn_line(f"{label}: regular file on the Hub, no sha256 without downloading; size pinned")
    for line in result.no_header_pin:
        output.warn_line(f"{line}; no header pin")
    for repo_id in result.kept_unpinned:
        output.info_line(f"{repo_id}: kept as it is (unpinned: true); `--pin {repo_id}` pins it to a commit")
    for repo_id, text in result.removed_comments:
        output.info_line(f"{repo_id}: removed the comment above it, written when it was unpinned: {text!r}")
    if not result.changes:
        output.info_line(
            "nothing else to change" if result.kept_unpinned else "already locked: nothing to change"
        )
    elif result.written:
        output.info_line(f"locked {len(result.changes)} value(s) in {manifest}")
    else:
        output.info_line(f"dry run: {len(result.changes)} value(s) would change")


def register(app: typer.Typer) -> None:
    app.command("lock", epilog=EXAMPLES)(lock)
