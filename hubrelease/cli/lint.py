"""`hubrelease lint FILE`: drafter lint findings; exit 1 when any is an error."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import JsonOpt

EXAMPLES = """
Examples:

  hubrelease lint drafter-q8_0.gguf --config drafter/config.json

  hubrelease lint drafter/ --json
"""


def lint(
    file: Annotated[
        Path, typer.Argument(help=".gguf (or a shard of a split set), .safetensors, index json or folder.")
    ],
    config: Annotated[
        Path | None, typer.Option("--config", help="The drafter's HF config.json to check against.")
    ] = None,
    json_mode: JsonOpt = False,
) -> None:
    """Check a DFlash drafter for silent conversion bugs: rope base, flavour, target layers, tensor set."""
    from hubrelease.lint import lint_file

    findings = lint_file(file, config)
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
            }
        )
    else:
        for finding in findings:
            output.stdout.print(f"{finding.severity}: [{finding.rule_id}] {finding.message}", markup=False)
            output.github_annotation(finding.severity, f"[{finding.rule_id}] {finding.message}", str(file))
        output.info_line(f"{file}: {errors} error(s), {len(findings) - errors} warning(s)")
    if errors:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("lint", epilog=EXAMPLES)(lint)
