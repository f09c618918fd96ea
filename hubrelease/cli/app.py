"""The typer application and the one place where errors become exit codes.

Exit codes: 0 ok, 1 check failed / drift, 2 usage or invalid input (also for click usage errors),
3 internal error (a bug: set HUBRELEASE_DEBUG=1 for the traceback), 4 the Hub could not be
reached or refused us, 130 interrupted.
"""

from __future__ import annotations

import os
from typing import Any

import typer
from typer import _click as click
from typer.core import TyperGroup

from hubrelease.cli import output
from hubrelease.errors import HubReleaseError


class HubReleaseGroup(TyperGroup):
    """Typer group whose ``invoke`` turns library errors into one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except HubReleaseError as exc:
            if os.environ.get("HUBRELEASE_DEBUG"):
                raise
            output.error_line(str(exc))
            raise typer.Exit(exc.exit_code) from None
        except (click.ClickException, typer.Exit, typer.Abort):
            raise
        except KeyboardInterrupt:
            output.error_line("interrupted")
            raise typer.Exit(130) from None
        except OSError as exc:
            if os.environ.get("HUBRELEASE_DEBUG"):
                raise
            where = f"{exc.filename}: " if exc.filename else ""
            output.error_line(f"{where}{exc.strerror or exc}")
            raise typer.Exit(2) from None
        except Exception as exc:
            if os.environ.get("HUBRELEASE_DEBUG"):
                raise
            output.error_line(
                f"internal error: {type(exc).__name__}: {exc} (set HUBRELEASE_DEBUG=1 for a traceback)"
            )
            raise typer.Exit(3) from None


app = typer.Typer(
    cls=HubReleaseGroup,
    name="hubrelease",
    help="Publish ML model releases to the Hugging Face Hub with integrity you can check.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _register() -> None:
    # One module per command; each exposes ``register(app)``. Imported here so `--help` lists all.
    from hubrelease.cli import (
        add,
        build,
        checksums,
        hub,
        import_,
        init,
        inspect,
        lint,
        lock,
        push,
        render_card,
        schema,
        verify,
    )

    for module in (
        verify,
        checksums,
        schema,
        build,
        hub,
        render_card,
        inspect,
        lint,
        lock,
        push,
        init,
        add,
        import_,
    ):
        module.register(app)


_register()


def main() -> None:
    """Console-script entry point."""
    app()
