"""Option and argument values are converted without pydantic, with typer's own messages."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from typer.core import TyperArgument, TyperOption

from hubrelease.cli.app import app
from hubrelease.cli.params import PlainArgument, PlainOption
from tests.factories.cli import invoke, run_program


def test_every_parameter_of_a_built_command_is_converted_here() -> None:
    """typer's ``type_descriptor`` (undocumented) is where ``params`` reads it; a move fails here."""
    group = typer.main.get_command(app)
    command = group.get_command(typer.Context(group), "verify")  # type: ignore[attr-defined]
    assert command is not None and command.params
    for param in command.params:
        assert isinstance(param, (PlainOption, PlainArgument)), param
        assert isinstance(param, (TyperOption, TyperArgument))
        descriptor = param.type_descriptor
        assert descriptor.annotation is not None and descriptor.parameter_info is not None


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
