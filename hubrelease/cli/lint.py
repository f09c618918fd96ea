"""`hubrelease lint FILE`: drafter lint findings; exit 1 when any is an error."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import EndpointOpt, JsonOpt, is_hub_uri

EXAMPLES = """
Examples:

  hubrelease lint drafter-q8_0.gguf --config drafter/config.json

  hubrelease lint drafter/ --json

  hubrelease lint hf://acme/Ornith-DFlash/gguf/drafter-q8_0.gguf --config hf://acme/Ornith-DFlash/config.json
"""


def lint(
    file: Annotated[
        str,
        typer.Argument(
            help=".gguf (or a shard of a split set), .safetensors, index json or folder; or hf://REPO[@REV]/PATH."
        ),
    ],
    config: Annotated[
        str | None,
        typer.Option(
            "--config", help="The drafter's HF config.json to check against (hf:// for a remote FILE)."
        ),
    ] = None,
    endpoint: EndpointOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Check a DFlash drafter for silent conversion bugs: rope base, flavour, target layers, tensor set."""
    traffic: dict[str, int] = {}
    if is_hub_uri(file):
        from hubrelease.hub import hub_api
        from hubrelease.hub.remote_lint import lint_hub_file

        findings, cost = lint_hub_file(hub_api(endpoint), file, config)
        traffic = {"requests": cost.requests, "fetched_bytes": cost.fetched_bytes}
    else:
        from hubrelease.lint import lint_file

        findings = lint_file(Path(file), Path(config) if config else None)
    errors = sum(f.severity == "error" for f in findings)
    if json_mode:
        output.emit_json(
            {
                "schema_version": 1,
                "path": str(file),
                "ok": errors == 0,
                "findings": [
                    {"rule_id": f.rule_id, "severity": f.severity, "message": f.message} for f in findings
                ],
                **traffic,
            }
        )
    else:
        for finding in findings:
            output.stdout.print(f"{finding.severity}: [{finding.rule_id}] {finding.message}", markup=False)
            output.github_annotation(finding.severity, f"[{finding.rule_id}] {finding.message}", str(file))
        output.info_line(f"{file}: {errors} error(s), {len(findings) - errors} warning(s)")
        if traffic:
            output.info_line(
                f"read {traffic['fetched_bytes']} bytes of headers in {traffic['requests']} request(s)"
            )
    if errors:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("lint", epilog=EXAMPLES)(lint)
