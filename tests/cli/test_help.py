"""Every command answers --help with an example, and the CLI never shows a traceback for bad usage."""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import inspect
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.core import TyperGroup
from typer.models import CommandFunctionType

import hubrelease.cli
from hubrelease.cli.app import COMMANDS, app
from hubrelease.cli.build import BuildGroup
from hubrelease.cli.groups import Entry, build
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke, run_program


def _leaves() -> dict[tuple[str, ...], Any]:
    """Every command that runs (not a group), built, by its path."""
    group = typer.main.get_command(app)
    found: dict[tuple[str, ...], Any] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        if isinstance(command, TyperGroup):
            ctx = typer.Context(command)
            for name in command.list_commands(ctx):
                child = command.get_command(ctx, name)
                assert child is not None, name
                walk(child, (*path, name))
        else:
            found[path] = command

    walk(group, ())
    return found


def _commands() -> list[list[str]]:
    return [list(path) for path in _leaves()]


TABLES: dict[str, dict[str, Entry]] = {"hubrelease": COMMANDS, "hubrelease build": BuildGroup.table}


class _Recorder(typer.Typer):
    """Records the names a command module registers, building nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def command(
        self, name: str | None = None, **settings: Any
    ) -> Callable[[CommandFunctionType], CommandFunctionType]:
        self.names.append(str(name))
        return lambda callback: callback

    def add_typer(self, typer_instance: typer.Typer, **settings: Any) -> None:
        self.names.append(str(settings["name"]))


@pytest.mark.parametrize("group", sorted(TABLES))
def test_each_lazy_command_table_matches_what_its_modules_register(group: str) -> None:
    """A table names each command's module and summary; a module registering more or other names,
    or a command whose help no longer starts with the summary the list shows, fails here."""
    table = TABLES[group]
    modules: dict[str, str] = {}
    for module in {entry.module for entry in table.values()}:
        recorder = _Recorder()
        importlib.import_module(f"hubrelease.cli.{module}").register(recorder)
        modules.update(dict.fromkeys(recorder.names, module))
    assert modules == {name: entry.module for name, entry in table.items()}
    helps = {name: str(build(entry.module, name).help) for name, entry in table.items()}
    assert {name: " ".join(text.split("\n\n")[0].split()) for name, text in helps.items()} == {
        name: entry.summary for name, entry in table.items()
    }


def test_top_level_help_lists_every_command_with_its_help() -> None:
    result = invoke(["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert f"\n  {name} " in result.stdout, name
    assert "Verify every artifact of a release: size, then SHA-256" in result.stdout
    assert "The loopback Hub: a local, disk-backed Hub" in result.stdout


_MODULES_AFTER = """
import json, sys
from hubrelease.cli.app import app
try:
    app(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


@functools.cache
def _modules_after(*args: str) -> set[str]:
    """The modules a fresh process holds after running the CLI with ``args``."""
    done = run_program([sys.executable, "-c", _MODULES_AFTER, *args], check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _typer_private(modules: set[str]) -> set[str]:
    return {
        m for m in modules if m.split(".")[0] == "click" or any(p.startswith("_") for p in m.split(".")[1:2])
    }


def test_help_loads_neither_rich_nor_pydantic() -> None:
    """typer's rich help and its pydantic parameter adapters each cost more than ``import typer``."""
    for args in (["--help"], ["verify", "--help"], ["build", "eval", "--help"], ["hub", "serve", "--help"]):
        loaded = _modules_after(*args) & {"rich", "pydantic", "typer.rich_utils", "typer._adapters"}
        assert loaded == set(), (args, loaded)


def test_the_cli_imports_no_private_typer_or_click_name() -> None:
    """Only typer's public surface: no ``typer._x`` module, no ``_x`` attribute of typer, no click."""
    found = []
    for source in sorted(Path(hubrelease.cli.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
                names = [f"{ast.unparse(node.value)}.{node.attr}"]
            for name in names:
                root, *rest = name.split(".")
                if root == "click" or (root == "typer" and any(p.startswith("_") for p in rest)):
                    found.append(f"{source.name}:{getattr(node, 'lineno', 0)}: {name}")
    assert found == []


def test_help_loads_no_private_typer_module_a_plain_typer_app_does_not() -> None:
    """After ``--help`` the CLI holds only the typer internals a bare typer app's help loads itself."""
    bare = (
        "import json, sys, typer\n"
        "app = typer.Typer(rich_markup_mode=None, add_completion=False)\n"
        "app.command('a')(lambda: None)\n"
        "app.command('b')(lambda: None)\n"
        "try:\n    app(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = run_program([sys.executable, "-c", bare, "a", "--help"], check=True)
    typers_own = _typer_private(set(json.loads(done.stdout.strip().splitlines()[-1])))
    for args in (["--help"], ["verify", "--help"], ["build", "eval", "--help"]):
        assert _typer_private(_modules_after(*args)) - typers_own == set(), args


def test_top_level_help_loads_only_the_app_beyond_import_typer() -> None:
    """``--help`` lists the commands from the table: no command module, no output layer, no library."""
    done = run_program(
        [sys.executable, "-c", "import json, sys, typer; print(json.dumps(sorted(sys.modules)))"]
    )
    extra = _modules_after("--help") - set(json.loads(done.stdout))
    assert {m for m in extra if not m.startswith("typer.")} == {
        "hubrelease",
        "hubrelease.cli",
        "hubrelease.cli.app",
        "hubrelease.cli.groups",
    }


@pytest.mark.parametrize(
    "path",
    [[name] for name in COMMANDS] + [["build", name] for name in BuildGroup.table] + [["hub", "serve"]],
    ids=" ".join,
)
def test_command_help_loads_only_its_own_command_module(path: list[str]) -> None:
    """``hubrelease [GROUP] NAME --help`` builds NAME alone: beyond what ``hubrelease --help`` loads,
    it imports NAME's module (and its group's), the shared options and ``output``, nothing else: no
    other command's module, no library layer (manifest models, the Hub client, signing, templates)
    and none of what they import (pydantic, huggingface_hub, model_signing, jinja2, rich, yaml)."""
    table = TABLES.get(" ".join(["hubrelease", *path[:-1]]), {})
    own = {f"hubrelease.cli.{COMMANDS[path[0]].module}"}
    if path[-1] in table:
        own.add(f"hubrelease.cli.{table[path[-1]].module}")
    extra = _modules_after(*path, "--help") - _modules_after("--help")
    assert own <= extra <= own | {"hubrelease.cli.options", "hubrelease.cli.output"}


def test_parsing_a_commands_options_keeps_typers_messages_and_exit_code() -> None:
    """Values are coerced by typer itself now (its pydantic adapter): the messages are typer's."""
    result = invoke(["verify", "x", "-j", "0"])
    assert result.exit_code == 2
    assert (
        "error: Invalid value for '--jobs' / '-j': Input should be greater than or equal to 1"
        in result.stderr
    )


def test_a_bare_group_prints_its_help_on_stderr_and_exits_2() -> None:
    for args in ([], ["build"], ["hub"]):
        result = invoke(args)
        assert result.exit_code == 2, args
        assert result.stderr.startswith(f"Usage: hubrelease {' '.join([*args, ''])}"), result.stderr
        assert "Commands:" in result.stderr and "error:" not in result.stderr


def test_bad_option_values_keep_typers_messages() -> None:
    cases = [
        (
            ["verify", "x", "-j", "0"],
            "Invalid value for '--jobs' / '-j': Input should be greater than or equal to 1",
        ),
        (
            ["verify", "x", "-j", "two"],
            "Input should be a valid integer, unable to parse string as an integer",
        ),
        (
            ["init", ".", "--repo-type", "space"],
            "Invalid value for '--repo-type': 'space' is not one of 'model', 'dataset'.",
        ),
        (["hub", "serve", "--port", "70000"], "Input should be less than or equal to 65535"),
    ]
    for args, message in cases:
        result = invoke(args)
        assert result.exit_code == 2, args
        assert message in result.stderr, (args, result.stderr)


def test_every_command_has_help_with_an_example() -> None:
    commands = _commands()
    assert len(commands) >= 17
    for path in commands:
        result = invoke([*path, "--help"])
        assert result.exit_code == 0, path
        assert "Example" in result.stdout, f"{' '.join(path)} --help shows no example"


def test_unknown_command_and_option_are_usage_errors() -> None:
    assert invoke(["no-such-command"]).exit_code == 2
    result = invoke(["verify", "--no-such-option"])
    assert result.exit_code == 2
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["verify", "--no-such-option"], "No such option: --no-such-option"),
        (["verify"], "Missing argument"),
        (["init", "x", "--repo-type", "spaceship"], "'spaceship' is not one of"),
        (["no-such-command"], "No such command"),
        (["verify", "a.yaml", "b.yaml"], "unexpected extra argument"),
    ],
)
def test_usage_errors_are_one_error_line_and_exit_2(args: list[str], expected: str) -> None:
    result = invoke(args)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and expected in lines[0]
    assert "╭" not in result.stderr + result.stdout and "Value error" not in lines[0]


def test_version_prints_the_package_version() -> None:
    from hubrelease import __version__

    result = invoke(["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"hubrelease {__version__}"


def test_tables_without_a_terminal_keep_whole_paths_and_digests(tmp_path: Path) -> None:
    from tests.factories.releases import write_release

    long_name = "very/long/" + "sub-folder-name/" * 8 + "model-with-a-long-name.safetensors"
    manifest = write_release(tmp_path, {long_name: b"x" * 10})
    (tmp_path / long_name).write_bytes(b"y" * 10)  # same size, other digest
    result = invoke(["verify", str(manifest), "--no-cache"], env={"COLUMNS": "80"})
    assert result.exit_code == 1
    row = next(line for line in result.stdout.splitlines() if "digest_mismatch" in line)
    assert long_name in row
    assert hashlib.sha256(b"y" * 10).hexdigest() in row


def test_hub_serve_help_states_the_servers_limits() -> None:
    """The limits `hub serve --help` documents are the loopback Hub's defaults."""
    from hubrelease.cli.hub import EXAMPLES
    from hubrelease_loopback import xetformat, xetstore

    defaults = inspect.signature(LoopbackHub).parameters
    units = {"KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "s": 1}
    stated = {}
    for line in EXAMPLES.splitlines():
        name, _, rest = line.strip().partition(" ")
        if name in defaults:
            number, unit = rest.split()[:2]
            stated[name] = int(number) * units.get(unit.removesuffix("/s"), 1)
    assert stated == {name: defaults[name].default for name in stated}
    assert len(stated) == 10
    assert "80 MiB per xorb, 64 MiB per shard" in EXAMPLES and "(128 KiB)" in EXAMPLES
    assert (xetstore.MAX_XORB_BYTES, xetstore.MAX_SHARD_BYTES, xetformat.MAX_CHUNK) == (
        80 << 20,
        64 << 20,
        128 << 10,
    )


def test_typer_finds_every_callbacks_annotations_already_evaluated() -> None:
    """typer would evaluate each annotation string four times per build: none is left a string."""
    for command in _leaves().values():
        annotations = inspect.unwrap(command.callback).__annotations__ if command.callback else {}
        assert annotations and not any(isinstance(a, str) for a in annotations.values()), command.name
