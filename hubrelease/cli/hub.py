"""`hubrelease hub serve`: run the loopback Hub in the foreground."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hubrelease.cli import output

EXAMPLES = """
Examples:

  hubrelease hub serve --root ./hub-data --port 8765

  # in another shell:
  HF_ENDPOINT=http://127.0.0.1:8765 hf download acme/drafter
"""

hub_app = typer.Typer(
    name="hub", help="The loopback Hub: a local, disk-backed Hub for tests and demos.", no_args_is_help=True
)


@hub_app.command("serve", epilog=EXAMPLES)
def serve(
    root: Annotated[
        Path, typer.Option("--root", help="Folder holding the Hub's repos and blobs.", show_default=False)
    ],
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="TCP port on 127.0.0.1 (0 = any free port).")
    ] = 0,
) -> None:
    """Serve a Hub-compatible API (git LFS and Xet) on 127.0.0.1 until interrupted."""
    from hubrelease.hub.server import LoopbackHub

    hub = LoopbackHub(root, port=port, access_log=output.info_line)
    output.info_line(f"loopback Hub at {hub.url} (root {root})")
    output.info_line(f"use: HF_ENDPOINT={hub.url}, or --endpoint {hub.url}")
    try:
        hub.serve_forever()
    except KeyboardInterrupt:
        output.info_line("stopped")
    finally:
        hub.stop()


def register(app: typer.Typer) -> None:
    app.add_typer(hub_app, name="hub")
