"""Option and argument values are converted without pydantic, with typer's own messages."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from typer.core import TyperArgument, TyperGroup, TyperOption

from hubrelease.cli.app import app
from hubrelease.cli.params import PlainArgument, PlainOption, plain
from tests.factories.cli import invoke, run_program


def _built(command: Any) -> list[Any]:
    """``command`` and every command under it, built."""
    found = [command]
    if isinstance(command, TyperGroup):
        ctx = typer.Context(command)
        for name in command.list_commands(ctx):
            found += _built(command.get_command(ctx, name))
    return found


def test_every_parameter_of_every_command_is_converted_here() -> None:
    """Once a command parses its arguments, each option and argument typer built is moved to its plain
    subclass, its converter read from the callback's own declaration: if typer stops building
    ``TyperOption`` / ``TyperArgument``, or a declaration is no longer found, the parameter keeps
    typer's pydantic coercion and fails here."""
    commands = [c for c in _built(typer.main.get_command(app)) if not isinstance(c, TyperGroup)]
    assert len(commands) >= 26
    for command in commands:
        command.make_context(command.name, [], resilient_parsing=True)
    params = [param for command in commands for param in command.params]
    assert len(params) > 100
    for param in params:
        assert isinstance(param, (PlainOption, PlainArgument)), param.name
        assert isinstance(param, (TyperOption, TyperArgument))
        assert callable(param.convert_plain)


def test_a_declaration_this_module_does_not_convert_keeps_typers_coercion() -> None:
    """A float, a custom parser or a resolved path keeps typer's own class and its pydantic adapter."""

    def command(
        count: Annotated[int, typer.Option(min=2)] = 3,
        ratio: Annotated[float, typer.Option()] = 0.5,
        size: Annotated[int, typer.Option(parser=int)] = 1,
        where: Annotated[Path | None, typer.Option(resolve_path=True)] = None,
        names: Annotated[list[str] | None, typer.Argument()] = None,
    ) -> None:
        """A command."""

    scratch = typer.Typer(add_completion=False)
    scratch.command()(command)
    built = typer.main.get_command(scratch)
    plain(built.params, built.callback)
    classes = {param.name: type(param) for param in built.params}
    assert classes == {
        "count": PlainOption,
        "ratio": TyperOption,
        "size": TyperOption,
        "where": TyperOption,
        "names": PlainArgument,
    }
    ctx = typer.Context(built)
    with pytest.raises(typer.BadParameter, match="greater than or equal to 2"):
        built.params[0].process_value(ctx, "1")
    assert built.params[4].process_value(ctx, ("a", "b")) == ["a", "b"]


def test_parsing_a_commands_values_leaves_pydantic_unloaded() -> None:
    """typer's adapter imports pydantic for every parameter; a warm verify must not pay for it."""
    probe = (
        "import sys\n"
        "from hubrelease.cli.app import app\n"
        "for args in (['verify', 'x', '--dir', 'd', '--revision', 'r', '-j', '2'], ['init', '.', '--repo-type', 'x'],"
        " ['hub', 'serve', '--root', 'r', '--port', '0x']):\n"
        "    try:\n"
        "        app(args)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(sorted(m for m in ('pydantic', 'typer._adapters') if m in sys.modules))\n"
    )
    done = run_program([sys.executable, "-c", probe], check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_path_checks_keep_typers_messages(tmp_path: Path) -> None:
    """``exists`` and ``file_okay=False`` as typer words them (``--inputs`` takes folders)."""
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for given, problem in ((a_file, "is a file"), (tmp_path / "absent", "does not exist")):
        result = invoke(["rebuild", "x.yaml", "--inputs", str(given)])
        assert result.exit_code == 2
        assert f"Invalid value for '--inputs': dir '{given}' {problem}." in result.stderr, result.stderr


def test_choices_and_booleans_keep_typers_messages() -> None:
    result = invoke(["init", ".", "--repo-type", "DATASET"])
    assert result.exit_code == 2
    assert "'DATASET' is not one of 'model', 'dataset'." in result.stderr
    result = invoke(["verify"])
    assert result.exit_code == 2
    assert "Missing argument 'manifest'." in result.stderr
