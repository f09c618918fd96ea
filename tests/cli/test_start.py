"""The console script imports the application with the collector off and runs commands with it on."""

from __future__ import annotations

import json
import sys
from importlib.metadata import entry_points

from tests.factories.cli import run_program

_REPORT = """
import atexit, gc, json, sys
seen = {}
def report():
    print(json.dumps(seen))
def body():
    seen.update(frozen=gc.get_freeze_count(), enabled=gc.isenabled(), typer="typer" in sys.modules)
import hubrelease.cli.app as app
app.main = lambda: body()
atexit.register(report)
from hubrelease.cli.start import main
main()
"""


def test_the_console_script_is_the_start_module() -> None:
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "hubrelease"]
    assert script.value == "hubrelease.cli.start:main"


def test_what_the_cli_imported_is_frozen_and_the_command_runs_with_the_collector_on() -> None:
    """Everything imported before the command (typer, click, the app) sits in the permanent
    generation, so no collection during start-up or at exit walks it; the command's own garbage is
    still collected."""
    before = json.loads(
        run_program(
            [sys.executable, "-c", "import gc, json; print(json.dumps(gc.get_freeze_count()))"]
        ).stdout
    )
    done = run_program([sys.executable, "-c", _REPORT], check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["enabled"] is True
    assert seen["typer"] is True
    assert seen["frozen"] > before + 10_000
