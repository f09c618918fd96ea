"""`hubrelease schema`: print the manifest's JSON Schema."""

from __future__ import annotations

import typer

from hubrelease.cli import output
from hubrelease.manifest import manifest_json_schema

EXAMPLES = """
Examples:

  hubrelease schema > hubrelease.schema.json

  # then, first line of hubrelease.yaml, for editors running yaml-language-server:
  # yaml-language-server: $schema=./hubrelease.schema.json
"""


def schema() -> None:
    """Print the JSON Schema of the release manifest."""
    output.emit_json(manifest_json_schema())


def register(app: typer.Typer) -> None:
    app.command("schema", epilog=EXAMPLES)(schema)
