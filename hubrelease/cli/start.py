"""The console script's entry point: the CLI's imports run with the garbage collector off.

Why: ``hubrelease --help`` is measured against ``import typer`` and every command pays its
start-up. Importing typer, click and a command module allocates tens of thousands of objects
that live until exit; with the collector on, each allocation threshold crossed walks all of them
(and the interpreter's final collection walks them again). Importing with the collector off and
then moving what was imported to the permanent generation (``gc.freeze``, meant for objects that
live for the whole process) drops about a tenth of a help screen's instructions. The command
itself runs with the collector on.
"""

from __future__ import annotations

import gc


def main() -> None:
    """Import the application with the collector off, freeze what it imported, then run it."""
    gc.disable()
    try:
        from hubrelease.cli.app import main as run
    finally:
        gc.freeze()
        gc.enable()
    run()
