"""Typed options shared by every command, defined once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

ManifestArg = Annotated[
    Path,
    typer.Argument(help="Release manifest (YAML), e.g. hubrelease.yaml.", show_default=False),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Machine-readable output on stdout (schema in README).")
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
