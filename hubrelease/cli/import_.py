"""`hubrelease import`: a manifest for a repo already on the Hub, its large files never downloaded."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from hubrelease.cli import output
from hubrelease.cli.options import EndpointOpt, JsonOpt, QuietOpt, TokenOpt, hub_session

EXAMPLES = """
Examples:

  hubrelease import acme/my-drafter --out hubrelease.yaml

  hubrelease import acme/my-drafter@v1.0 --out v1.yaml     # a tag or branch, resolved to a commit

  hubrelease import acme/chat-data --repo-type dataset --out data.yaml --endpoint local --json

  hubrelease import hf://datasets/acme/chat-data@v1 --out data.yaml   # as the hf CLI names repos

A repo that holds a published hubrelease.yaml gets that manifest back, byte for byte (pins, card,
roles, claims), checked against the Hub at the resolved commit. Otherwise the repo is described:
LFS files from Hub metadata alone; small regular files are fetched (one GET each) to compute their
sha256 (checked against their git blob id). The command printed last checks the Hub against it
(`verify OUT --remote --revision REVISION`): it passes until the repo changes.
Exit codes: 0 written, 1 restored manifest disagrees with the Hub, 2 missing repo or revision,
invalid input, an unsafe path on the Hub, or OUT exists (use --force), 4 the Hub could not be
reached or refused us.
"""


def import_(
    spec: Annotated[
        str,
        typer.Argument(
            metavar="REPO_ID[@REVISION]",
            help="Hub repo, optionally at a branch, tag or commit; hf://, datasets/ and spaces/ forms too.",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Manifest to write.", show_default=False)],
    repo_type: Annotated[
        Literal["model", "dataset", "space"] | None,
        typer.Option(
            "--repo-type", help="model | dataset | space (default: from the id's form, else model)."
        ),
    ] = None,
    endpoint: EndpointOpt = None,
    token: TokenOpt = None,
    *,
    quiet: QuietOpt = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing manifest.")] = False,
    json_mode: JsonOpt = False,
) -> None:
    """Describe a published repo at one commit: sizes, sha256s and card metadata from the Hub."""
    from hubrelease.cli.written import print_written, written_payload
    from hubrelease.onboarding.importer import import_repo

    output.quiet_library_progress()
    api = hub_session(endpoint, token, quiet)
    result = import_repo(api, spec, out, repo_type=repo_type, force=force, endpoint=endpoint)
    manifest = result.manifest
    if json_mode:
        extra = {
            "repo_id": manifest.release.repo_id,
            "revision": result.revision,
            "commit": result.commit,
            "fetched_bytes": result.fetched_bytes,
            "restored": result.restored,
            "check": result.check,
        }
        output.emit_json(written_payload("import", result.path, manifest, result.warnings, **extra))
    else:
        how = "restored the published manifest" if result.restored else "described"
        print_written(
            manifest,
            result.warnings,
            f"wrote {result.path}: {manifest.release.repo_id}@{result.revision} = {result.commit} ({how}), "
            f"{len(manifest.artifacts)} artifact(s), {result.fetched_bytes} bytes fetched",
        )
        if result.check is not None:
            output.info_line(f"check the Hub against it: {result.check}")
    if result.report is not None and result.report.has_drift:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("import", epilog=EXAMPLES)(import_)
