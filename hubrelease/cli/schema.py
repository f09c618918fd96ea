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
) -> None:
    """Print the JSON Schema of the release manifest (or, with --eval, of evaluation files)."""
    from hubrelease.evaluation import evaluation_json_schema
    from hubrelease.manifest import manifest_json_schema

    output.emit_json(evaluation_json_schema() if evaluation else manifest_json_schema())


def register(app: typer.Typer) -> None:
    app.command("schema", epilog=EXAMPLES)(schema)
