"""`hubrelease preview`: the release's Hub page before it is pushed, from an embedded loopback Hub."""

from __future__ import annotations

import threading
from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import DirOpt, JsonOpt, ManifestArg, QuietOpt

EXAMPLES = """
Examples:

  hubrelease preview hubrelease.yaml                 # serve the page until Ctrl-C
  hubrelease preview hubrelease.yaml --open          # and open it in the default browser
  hubrelease preview hubrelease.yaml --check --json  # CI: report the problems and exit

The release is checked as push checks it (local verify, lint, a current card), then committed as
push would commit it to a loopback Hub in a temporary folder on 127.0.0.1; nothing leaves the
machine and the pinned repos are not looked up. The page shows the card as the Hub renders it,
the file list, the pins, refs and commits. Problems: front matter the Hub's validate-yaml would
refuse (huggingface_hub's ModelCard/DatasetCard parse, licence ids, repo ids, relation, tags),
images and links to files the release does not publish, anchors the card does not have, images
from off the machine (not loaded). Exit codes (--check): 0 no problems, 1 problems found or the
release does not pass push's preflight, 2 invalid input.
"""


def preview(
    manifest: ManifestArg,
    directory: DirOpt = None,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="TCP port on 127.0.0.1 (0 = any free port).")
    ] = 0,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default browser, where there is one.")
    ] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Report the problems and exit (1 if any) instead of serving.")
    ] = False,
    *,
    quiet: QuietOpt = False,
    json_mode: JsonOpt = False,
) -> None:
    """Show the release's page as the Hub would, from an embedded loopback Hub, and list its problems."""
    from hubrelease.preview import open_preview

    output.set_quiet(quiet)
    with output.progress(json_mode) as progress, open_preview(manifest, directory, port, progress) as shown:
        if json_mode:
            output.emit_document("preview", **shown.to_dict())
        else:
            for problem in shown.problems:
                output.warn_line(f"{problem.kind}: {problem.message}")
            output.info_line(f"{len(shown.problems)} problem(s); page: {shown.url}")
        if check:
            raise typer.Exit(1 if shown.problems else 0)
        if open_browser:
            _open(shown.url)
        output.info_line("nothing leaves this machine; Ctrl-C stops the preview")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            output.info_line("stopped")


def _open(url: str) -> None:
    import webbrowser

    try:
        webbrowser.get()
    except webbrowser.Error:
        output.warn_line(f"no browser found here: open {url} yourself")
        return
    webbrowser.open(url)


def register(app: typer.Typer) -> None:
    app.command("preview", epilog=EXAMPLES)(preview)
