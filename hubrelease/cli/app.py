"""The typer application and the one place where errors become exit codes.

Exit codes: 0 ok, 1 check failed / drift, 2 usage or invalid input (also for click usage errors),
3 internal error (a bug: set HUBRELEASE_DEBUG=1 for the traceback), 4 the Hub could not be
reached or refused us, 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer import _click as click
from typer._click.exceptions import NoArgsIsHelpError, UsageError
from typer.core import TyperGroup

from hubrelease.cli import output
from hubrelease.errors import HubReleaseError


class HubReleaseGroup(TyperGroup):
    """Typer group whose ``invoke`` turns library errors into one line and an exit code."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Usage errors as one ``error:`` line and exit 2 (typer would draw a multi-line box).

        click is run with ``standalone_mode=False`` so its exceptions reach us; the exit codes are
        click's own (2 for usage, 1 for other click errors), Ctrl-C outside a command is 130.
        """
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except NoArgsIsHelpError as exc:
            exc.show()  # a bare group: its help, as click prints it
            code = exc.exit_code
        except UsageError as exc:
            hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
            output.error_line(f"{exc.format_message().replace('Value error, ', '')}{hint}")
            code = exc.exit_code
        except click.ClickException as exc:
            output.error_line(exc.format_message())
            code = exc.exit_code
        except (typer.Abort, KeyboardInterrupt):
            output.error_line("interrupted")
            code = 130
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)

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


def _version(value: bool) -> None:
    if value:
        from hubrelease import __version__

        output.stdout.print(f"hubrelease {__version__}", markup=False)
        raise typer.Exit(0)


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version, is_eager=True
    ),
) -> None:
    """Publish ML model releases to the Hugging Face Hub with integrity you can check."""


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
