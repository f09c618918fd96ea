"""Every command answers --help with an example, and the CLI never shows a traceback for bad usage."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from hubrelease.cli.app import app

runner = CliRunner()


def _commands() -> list[list[str]]:
    group = typer.main.get_command(app)
    found: list[list[str]] = []

    def walk(command: object, path: list[str]) -> None:
        children = getattr(command, "commands", None)
        if children:
            for name, child in children.items():
                walk(child, [*path, name])
        else:
            found.append(path)

    walk(group, [])
    return found


def test_every_command_has_help_with_an_example() -> None:
    commands = _commands()
    assert len(commands) >= 17
    for path in commands:
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, path
        assert "Example" in result.stdout, f"{' '.join(path)} --help shows no example"


def test_unknown_command_and_option_are_usage_errors() -> None:
    assert runner.invoke(app, ["no-such-command"]).exit_code == 2
    result = runner.invoke(app, ["verify", "--no-such-option"])
    assert result.exit_code == 2
    assert "Traceback" not in result.stdout + result.stderr
