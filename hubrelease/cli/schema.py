"""`hubrelease schema`: print the manifest's JSON Schema."""

from __future__ import annotations

from typing import Annotated

import typer

from hubrelease.cli import output

EXAMPLES = """
Examples:

  hubrelease schema > hubrelease.schema.json

  # then, first line of hubrelease.yaml, for editors running yaml-language-server:
  # yaml-language-server: $schema=./hubrelease.schema.json

  hubrelease schema --eval > evaluation.schema.json
"""


def schema(
    evaluation: Annotated[
        bool, typer.Option("--eval", help="Print the evaluation JSON's schema instead of the manifest's.")
    ] = False,
    eval_spec: Annotated[
        bool, typer.Option("--eval-spec", help="Print the schema of `build eval --spec` files instead.")
    ] = False,
) -> None:
    """Print the JSON Schema of the release manifest (or of evaluation files, or of build eval specs)."""
    from hubrelease.evaluation.schema import json_schema

    output.emit_json(json_schema("eval-spec" if eval_spec else "evaluation" if evaluation else "manifest"))


def register(app: typer.Typer) -> None:
    app.command("schema", epilog=EXAMPLES)(schema)
