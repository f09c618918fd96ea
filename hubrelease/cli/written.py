"""How a command that wrote a new manifest reports it (init, import), in a module of its own so
that neither command's ``--help`` imports the other's module."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hubrelease.cli import output

if TYPE_CHECKING:
    from hubrelease.manifest.models import Manifest


def written_payload(
    command: str, path: Path, manifest: Manifest, warnings: Sequence[str], **extra: object
) -> dict[str, object]:
    """The ``--json`` document of a command that wrote a new manifest (init, import)."""
    return output.document(
        command,
        manifest=str(path),
        **extra,
        artifacts=[
            {"path": a.path, "size": a.size, "sha256": a.sha256, "role": a.role} for a in manifest.artifacts
        ],
        evaluations=list(manifest.evaluation_paths),
        warnings=list(warnings),
    )


def print_written(manifest: Manifest, warnings: Sequence[str], summary: str) -> None:
    """Warnings, one line per listed file (role, size, path), then ``summary`` on stderr."""
    for warning in warnings:
        output.warn_line(warning)
    for artifact in manifest.artifacts:
        output.value_line(f"{artifact.role:<11} {artifact.size:>14}  {artifact.path}")
    for evaluation in manifest.evaluation_files:
        size = "" if evaluation.size is None else evaluation.size
        output.value_line(f"{'evaluation':<11} {size:>14}  {evaluation.path}")
    if manifest.card is not None and manifest.card.hand_written:
        size = "" if manifest.card.size is None else manifest.card.size
        output.value_line(f"{'card':<11} {size:>14}  {manifest.card.output}")
    output.info_line(summary)
