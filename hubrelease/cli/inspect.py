"""`hubrelease inspect FILE`: architecture, key metadata and tensor composition from headers only."""

from __future__ import annotations

from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import EndpointOpt, JsonOpt, hub_session

EXAMPLES = """
Examples:

  hubrelease inspect Ornith-DFLASH-m1-q4.gguf

  hubrelease inspect target-00001-of-00005.gguf --json

  hubrelease inspect drafter/model.safetensors.index.json

  hubrelease inspect hf://acme/Ornith-GGUF@main/Ornith-IQ2_KS-00001-of-00005.gguf   # header bytes only
"""


def _counts(counts: dict[str, int], unit: str = "") -> str:
    return ", ".join(f"{n}{unit} {t}" for t, n in counts.items()) or "none"


def _size(nbytes: int) -> str:
    if nbytes < 2**20:
        return f"{nbytes} B"
    return f"{nbytes / 2**30:.2f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.2f} MiB"


def inspect(
    file: Annotated[
        str,
        typer.Argument(
            help=".gguf (any shard of a split set), .safetensors, index json or folder; "
            "or hf://[datasets/]REPO[@REV]/PATH on the Hub."
        ),
    ],
    endpoint: EndpointOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Read a GGUF or safetensors header (never the tensor data) and show what the file really holds."""
    from hubrelease.hub.remote_headers import summarize_location

    summary = summarize_location(file, lambda: hub_session(endpoint))
    if json_mode:
        output.emit_document(None, **summary)
        return
    for item in summary["files"]:
        output.value_line(f"{item['path']}  ({item['size']} bytes)")
    if summary["format"] == "gguf":
        output.value_line(
            f"architecture: {summary['architecture']}   GGUF v{summary['version']}   alignment {summary['alignment']}"
        )
    for key, value in summary["metadata"].items():
        output.value_line(f"  {key} = {value}")
    output.value_line(f"tensors: {summary['tensor_count']} ({_counts(summary['composition'])})")
    sizes = ", ".join(f"{t} {_size(n)}" for t, n in summary["bytes_per_type"].items())
    output.value_line(f"bytes per type: {sizes or 'none'}")
    for name in summary.get("unknown_types", []):
        output.warn_line(f"{name} is an unknown ggml type id; its size was taken from the tensor offsets")
    if "requests" in summary:
        output.info_line(
            f"read {summary['fetched_bytes']} bytes of headers in {summary['requests']} request(s)"
        )


def register(app: typer.Typer) -> None:
    app.command("inspect", epilog=EXAMPLES)(inspect)
