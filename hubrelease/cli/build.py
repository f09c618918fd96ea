"""`hubrelease build ...`: the builder command group. Each builder family registers its commands here."""

from __future__ import annotations

import typer

from hubrelease.cli.groups import CommandGroup

build_app = typer.Typer(
    cls=CommandGroup,
    name="build",
    help="Build release artifacts: drafters, evaluation JSON, eval results, dataset cards.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    # Builder command modules add themselves to ``build_app`` on import.
    from hubrelease.cli import build_data, build_drafters, build_eval_results

    build_data.register(build_app)
    build_drafters.register(build_app)
    build_eval_results.register(build_app)
    app.add_typer(build_app, name="build")
