"""`hubrelease diff`: what changed between two releases."""

from __future__ import annotations

from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import EndpointOpt, JsonOpt, QuietOpt, TokenOpt, hub_session

EXAMPLES = """
Examples:

  hubrelease diff old/hubrelease.yaml new/hubrelease.yaml       # two local releases

  hubrelease diff acme/drafter@6c7242c acme/drafter@2274357     # two commits on the Hub (headers only)

  hubrelease diff hubrelease.yaml                               # the published (or superseded) release -> this one

  hubrelease diff hubrelease.yaml --record                      # pin changes.json for the card's "Changes since"

Exit codes: 0 the releases are the same, 1 they differ, 2 invalid input, 4 the Hub could not be reached.
"""


def diff(
    old: Annotated[str, typer.Argument(help="A manifest path or REPO@REV (the older release).")],
    new: Annotated[
        str | None,
        typer.Argument(
            help="A manifest path or REPO@REV; absent: OLD is a local manifest, compared after the release it supersedes (release.supersedes), else its published one."
        ),
    ] = None,
    record: Annotated[
        bool,
        typer.Option(
            "--record",
            help='Write the changes since release.supersedes to changes.json in the release folder and pin it as an artifact: the card\'s "Changes since" section renders from it (render-card and verify stay offline).',
        ),
    ] = False,
    json_mode: JsonOpt = False,
    endpoint: EndpointOpt = None,
    *,
    token: TokenOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Files, pins, architecture (from headers), evaluation cells, licence and signer that changed."""
    from hubrelease.diff.compare import diff_specs, needs_hub, record_changes
    from hubrelease.errors import InputError

    output.set_quiet(quiet)
    if record:
        if new is not None:
            raise InputError("--record takes one manifest: it compares it with release.supersedes")
        recorded = record_changes(hub_session(endpoint, token, quiet), old)
        output.info_line(
            f"recorded {recorded.count} change(s) since {recorded.since} in {recorded.path} "
            f"(pinned, sha256 {recorded.sha256[:16]})"
        )
        return
    api = hub_session(endpoint, token, quiet) if needs_hub(old, new) else None
    result = diff_specs(api, old, new)
    if json_mode:
        output.emit_document("diff", **result.to_dict())
    else:
        output.info_line(f"{result.old} -> {result.new}")
        output.print_rows(
            ["section", "subject", "change"],
            [[c.section, c.subject, c.detail] for c in result.changes],
            what="changes",
        )
        output.info_line("no differences" if not result.changes else f"{len(result.changes)} difference(s)")
    raise typer.Exit(1 if result.changes else 0)


def register(app: typer.Typer) -> None:
    app.command("diff", epilog=EXAMPLES)(diff)
