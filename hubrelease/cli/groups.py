"""The command group every hubrelease group is built with: a bare group prints its help and exits 2.

typer 0.29 vendors click under a private name and exports no name for click's ``Context``,
``Command``, ``HelpFormatter`` or its exception classes, so the CLI handles them through public
typer names only: ``typer.core.TyperGroup`` to subclass, ``typer.TyperException`` (the base of
click's exceptions) to catch, and ``Any`` where a hint would have to name a vendored click class.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

USAGE_ERROR = 2
"""click's exit code for usage errors, also what a bare group exits with."""


class CommandGroup(TyperGroup):
    """A group run with no arguments shows its help on stderr and exits 2, as click does.

    click signals that case with an exception class typer does not export; answering it here,
    before click raises it, leaves every exception that reaches ``HubReleaseGroup.main`` an error.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            typer.echo(ctx.get_help(), err=True, color=ctx.color)
            raise typer.Exit(USAGE_ERROR)
        return super().parse_args(ctx, args)
