"""`hubrelease check`: the pull-request gate of a release repository, and what its push would publish."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import (
    DirOpt,
    EndpointOpt,
    InputsOpt,
    JsonOpt,
    ManifestArg,
    QuietOpt,
    TokenOpt,
    hub_session,
)

EXAMPLES = """
Examples:

  hubrelease check hubrelease.yaml                       # every check, then the push plan

  hubrelease check hubrelease.yaml --summary "$GITHUB_STEP_SUMMARY" --json > check.json   # in CI

  hubrelease check hubrelease.yaml --endpoint local --no-preview

Checks, each reported: verify (files against the manifest), lint, card (render-card --check), rebuild
(--check, where recipes exist), pins (push's preflight), plan (push --dry-run against the published
release: added, changed, removed; unchanged files matched by digest, no weight bytes downloaded),
published (a file changed on the Hub outside a release: one this release does not change, yet the Hub
differs from the published manifest), preview (broken links and images on the page).
It passes before the first publish (the plan creates the repo) and on a pull request that changes
artifacts (the plan lists them).
Exit codes: 0 every check passed, 1 a check failed (each named), 2 invalid input, 4 the Hub could
not be reached or refused us.
"""


def check(
    manifest: ManifestArg,
    directory: DirOpt = None,
    summary: Annotated[
        Path | None,
        typer.Option("--summary", help="Also write the checks and the plan as Markdown (a CI job summary)."),
    ] = None,
    preview: Annotated[
        bool,
        typer.Option(
            "--preview/--no-preview", help="Check the page on an embedded loopback Hub (copies the files)."
        ),
    ] = True,
    inputs: InputsOpt = None,
    *,
    endpoint: EndpointOpt = None,
    token: TokenOpt = None,
    quiet: QuietOpt = False,
    json_mode: JsonOpt = False,
) -> None:
    """Check a release as a pull request proposes it, and plan its push against the published release."""
    from hubrelease.ci_gate import check_release

    api = hub_session(endpoint, token, quiet)
    with output.progress(json_mode) as progress:
        report = check_release(
            api, manifest, directory, preview=preview, progress=progress, inputs=inputs or (), summary=summary
        )
    if json_mode:
        output.emit_document("check", manifest=str(manifest), **report.to_dict())
    else:
        rows = [(c.verdict, c.name, c.detail) for c in report.checks]
        styles = {"pass": "green", "fail": "red", "skipped": "dim"}
        output.print_rows(("verdict", "check", "detail"), rows, styles=styles, what="checks")
        problems = [(c.name, problem) for c in report.checks for problem in c.problems]
        if problems:
            output.print_rows(("check", "problem"), problems, what="problems")
        if report.plan is not None:
            from hubrelease.cli.push import print_plan

            print_plan(report.plan)
    raise typer.Exit(0 if report.ok else 1)


def register(app: typer.Typer) -> None:
    app.command("check", epilog=EXAMPLES)(check)
