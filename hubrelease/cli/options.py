"""Typed options shared by every command, defined once."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

if TYPE_CHECKING:
    from huggingface_hub import HfApi


ManifestArg = Annotated[
    Path,
    typer.Argument(help="Release manifest (YAML), e.g. hubrelease.yaml.", show_default=False),
]
JsonOpt = Annotated[
    bool,
    typer.Option("--json", help="Machine-readable output on stdout (schema in the documentation: docs/)."),
]
JobsOpt = Annotated[
    int | None,
    typer.Option("--jobs", "-j", min=1, help="Hashing threads (default: all cores)."),
]
DirOpt = Annotated[
    Path | None,
    typer.Option(
        "--dir",
        help="Release folder (default: the manifest's `root:`, else the manifest's folder).",
        show_default=False,
    ),
]
InputsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--inputs",
        exists=True,
        file_okay=False,
        help="A folder outside the release that recipes may read (a target GGUF); repeatable. "
        "Without it, a recipe reads only inside the release folder.",
    ),
]
EndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--endpoint",
        help="Hub URL, or 'local' for the embedded loopback Hub (default: HF_ENDPOINT or huggingface.co).",
        show_default=False,
    ),
]


def is_hub_uri(text: str | Path | None) -> bool:
    """True for an ``hf://`` location (checked without importing the Hub client)."""
    return text is not None and str(text).startswith("hf://")


TokenOpt = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="Hub token (default: HF_TOKEN or `hf auth login`); never printed.",
        show_default=False,
    ),
]
RepoTypeOpt = Annotated[
    Literal["model", "dataset", "space"] | None,
    typer.Option("--repo-type", help="model | dataset | space (default: the manifest's release.repo_type)."),
]
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print only results and errors (no progress, notes or tables).")
]


def hub_session(
    endpoint: str | None, token: str | None = None, quiet: bool = False, *, writes: bool = False
) -> HfApi:
    """The Hub client for one command, after the options every Hub command shares took effect.

    A command that only reads has its remote reads bounded (``hub.bounds``) until it ends.
    """
    from hubrelease import redaction
    from hubrelease.cli import notices, output
    from hubrelease.hub.client import hub_api

    redaction.remember(token)
    output.set_quiet(quiet)
    if not writes:
        from hubrelease.hub import bounds

        bounds.start()
    api = hub_api(endpoint, token=token)
    notices.redact_library_logs()
    return api
