"""The groups hubrelease's commands live in: built on first use, bare groups answer with their help.

typer 0.29 vendors click under a private name and exports no name for click's ``Context``,
``Command``, ``HelpFormatter`` or its exception classes, so the CLI handles them through public
typer names only: ``typer.core.TyperGroup`` to subclass, ``typer.TyperException`` (the base of
click's exceptions) to catch, and ``Any`` where a hint would have to name a vendored click class.
A command is built the way typer's documentation gives: ``typer.main.get_command`` of an app
(here a scratch app holding that one command), never from typer's undocumented attributes.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any, ClassVar

import typer
from typer.core import TyperCommand, TyperGroup
from typer.models import CommandFunctionType

USAGE_ERROR = 2
"""click's exit code for usage errors, also what a bare group exits with."""

HELP_NAMES = ["-h", "--help"]


def _verbatim(text: str) -> str:
    """Mark every paragraph so click prints it as written (examples are laid out by hand)."""
    return "\n\n".join(f"\b\n{part}" for part in text.strip("\n").split("\n\n"))


def prepare(command: TyperCommand | TyperGroup) -> None:
    """For this command and those under it: plain help, verbatim epilogs, no pydantic for help flags.

    typer coerces a parameter's value through a pydantic ``TypeAdapter`` unless it is a bool flag
    whose value is already a bool (typer 0.29.2 typer/core.py:107, ``process_value``). click's help
    flag has no default, so an absent ``--help`` of a parent group (``hubrelease verify --help``)
    would be coerced and import pydantic, more than ``import typer`` costs on its own. With the
    default ``False`` every absent help flag is a bool; click makes the help option per context and
    caches it on the command, so setting it once here holds for every later context.
    """
    help_option = command.get_help_option(typer.Context(command, help_option_names=HELP_NAMES))
    if help_option is not None:
        help_option.default = False
    command.rich_markup_mode = None
    if command.epilog and not command.epilog.startswith("\b"):
        command.epilog = _verbatim(command.epilog)
    for child in getattr(command, "commands", {}).values():
        prepare(child)


class Entry:
    """One row of the command table (a plain class: defining a ``NamedTuple`` costs more at start-up)."""

    __slots__ = ("module", "summary")
    module: str
    """The module under hubrelease.cli whose ``register(app)`` defines the command."""
    summary: str
    """The first paragraph of the command's help, as ``hubrelease --help`` lists it."""

    def __init__(self, module: str, summary: str) -> None:
        self.module = module
        self.summary = summary


class Command(TyperCommand):
    """Every hubrelease command: its values converted without pydantic (``params``), the library's log
    records shown as notices (``notices``) while it runs. ``--help`` converts no value and runs
    nothing, so it imports neither module.
    """

    plain_values = False

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not self.plain_values and not set(args) & set(HELP_NAMES):
            from hubrelease.cli.params import plain

            plain(self.params, self.callback)
            self.plain_values = True
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        from hubrelease.cli import notices

        notices.listen()
        return super().invoke(ctx)


class CommandApp(typer.Typer):
    """A typer app whose commands are ``Command``s, their string annotations evaluated once, as each
    is registered.

    typer reads a callback's parameters twice, each time through ``inspect.signature(eval_str=True)``
    and ``typing.get_type_hints``: four evaluations of every ``Annotated[..., typer.Option(...)]``
    string (``from __future__ import annotations``), most of the time a command takes to build
    (pull: 3.7 ms, 1.0 ms once evaluated here). With ``inspect.get_annotations`` (which, unlike
    ``get_type_hints`` on Python 3.10, adds no ``Optional``), typer finds the objects and evaluates
    nothing.
    """

    def command(
        self, name: str | None = None, **settings: Any
    ) -> Callable[[CommandFunctionType], CommandFunctionType]:
        register = super().command(name, **{"cls": Command, **settings})

        def evaluated(callback: CommandFunctionType) -> CommandFunctionType:
            callback.__annotations__ = inspect.get_annotations(callback, eval_str=True)
            return register(callback)

        return evaluated


def _unchanged(callback: CommandFunctionType) -> CommandFunctionType:
    return callback


class _OneCommand(CommandApp):
    """A scratch app that keeps, of what a command module registers, the one command ``wanted``:
    typer builds every command of the app it is given, and one module registers up to three
    (build_drafters)."""

    def __init__(self, wanted: str) -> None:
        super().__init__(rich_markup_mode=None, add_completion=False)
        self.wanted = wanted

    def command(
        self, name: str | None = None, **settings: Any
    ) -> Callable[[CommandFunctionType], CommandFunctionType]:
        return super().command(name, **settings) if name == self.wanted else _unchanged

    def add_typer(self, typer_instance: typer.Typer, **settings: Any) -> None:
        if settings.get("name") == self.wanted:
            super().add_typer(typer_instance, **settings)


def build(module_name: str, name: str) -> TyperCommand | TyperGroup:
    """Command ``name`` as ``hubrelease.cli.<module_name>`` registers it, built alone and prepared.

    ``typer.main.get_command`` gives the command itself for an app of one command, and a group
    holding it for an app of one sub-app (``build``, ``hub``).
    """
    module = importlib.import_module(f"hubrelease.cli.{module_name}")
    scratch = _OneCommand(name)
    module.register(scratch)
    built = typer.main.get_command(scratch)
    command = built.commands[name] if isinstance(built, TyperGroup) else built
    assert isinstance(command, (TyperCommand, TyperGroup)), command
    prepare(command)
    return command


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


class LazyGroup(CommandGroup):
    """A group whose commands come from ``table``: a command's module is imported and the command
    built (typer inspects its signature) only when it runs or shows its own help. Importing them
    all to list their summaries cost more than ``import typer``; tests/cli/test_help.py checks that
    each module registers its names and that each summary is its command's own help.
    """

    table: ClassVar[dict[str, Entry]] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.table)

    def get_command(self, ctx: Any, cmd_name: str) -> TyperCommand | TyperGroup | None:
        if cmd_name not in self.table:
            return None
        if cmd_name not in self.commands:
            self.commands[cmd_name] = build(self.table[cmd_name].module, cmd_name)
        found = self.commands[cmd_name]
        assert isinstance(found, (TyperCommand, TyperGroup)), found
        return found

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """Each command with its summary cut as click cuts a command's short help, from the table:
        a ``TyperCommand`` holding only the summary answers ``get_short_help_str`` as the built
        command would, without inspecting any signature."""
        limit = formatter.width - 6 - max(len(name) for name in self.table)
        rows = [
            (name, TyperCommand(name=name, help=entry.summary).get_short_help_str(limit))
            for name, entry in self.table.items()
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
