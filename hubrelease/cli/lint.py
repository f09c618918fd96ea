"""`hubrelease lint FILE|MANIFEST`: drafter lint findings (or a whole release's); exit 1 when any is an error."""

from __future__ import annotations

from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import EndpointOpt, JsonOpt, hub_session

EXAMPLES = """
Examples:

  hubrelease lint drafter-q8_0.gguf --config drafter/config.json --target target-Q4_K_M.gguf

  hubrelease lint drafter/ --target hf://Qwen/Qwen3-8B@0f0b1b59b879ccde1353e6ebd0fb10c204d4c544/config.json

  hubrelease lint hf://acme/Ornith-DFlash/gguf/drafter-q8_0.gguf --config hf://acme/Ornith-DFlash/config.json

  hubrelease lint hubrelease.yaml --endpoint local     # the release: its lint: true artifacts against the
                                                       # pinned target, -hf tags, splits, licences

Exit codes: 0 no error, 1 an error finding, 2 invalid input, 4 the Hub could not be reached or refused us.
"""


def lint(
    file: Annotated[
        str,
        typer.Argument(
            help=".gguf (or a shard of a split set), .safetensors, index json or folder; hf://REPO[@REV]/PATH; "
            "or a release manifest (.yaml)."
        ),
    ],
    config: Annotated[
        str | None,
        typer.Option(
            "--config", help="The drafter's HF config.json to check against (hf:// for a remote FILE)."
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="The target it serves, for its depth, hidden size and vocabulary: a .gguf, a config.json "
            "or hf://REPO@REV/FILE (a manifest's pinned target by default).",
        ),
    ] = None,
    endpoint: EndpointOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Check a DFlash drafter for silent conversion bugs: rope base, flavour, target layers, tensor set."""
    from hubrelease.hub.lint_location import lint_location

    result = lint_location(file, config=config, target=target, hub=lambda: hub_session(endpoint))
    for warning in result.warnings:
        output.warn_line(warning)
    traffic = result.traffic
    if json_mode:
        output.emit_document(
            None,
            path=str(file),
            ok=result.errors == 0,
            findings=[
                {
                    "rule_id": r.finding.rule_id,
                    "severity": r.finding.severity,
                    "message": r.finding.message,
                    "file": r.file,
                }
                for r in result.findings
            ],
            **({"requests": traffic.requests, "fetched_bytes": traffic.fetched_bytes} if traffic else {}),
        )
    else:
        for r in result.findings:
            where = "" if r.file == file else f"{r.file}: "
            text = f"[{r.finding.rule_id}] {where}{r.finding.message}"
            output.value_line(f"{r.finding.severity}: {text}")
            output.github_annotation(r.finding.severity, text, r.file)
        output.info_line(
            f"{file}: {result.errors} error(s), {len(result.findings) - result.errors} warning(s)"
        )
        if traffic:
            output.info_line(
                f"read {traffic.fetched_bytes} bytes of headers in {traffic.requests} request(s)"
            )
    if result.errors:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("lint", epilog=EXAMPLES)(lint)
