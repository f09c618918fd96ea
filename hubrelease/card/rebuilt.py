"""The card's "Reproducibility" section: which files and figures ``hubrelease rebuild --check`` re-makes.

One row per output that carries a recipe (artifacts, evaluations): the builder, what it read and,
for an evaluation, how many figures are recomputed from its raw runs, counted as ``rebuild`` counts
them (every number of the JSON). The tool versions are the recipes' own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hubrelease.evaluation.figures import figures
from hubrelease.evaluation.models import Evaluation
from hubrelease.manifest.jobs import plan_jobs
from hubrelease.manifest.models import Manifest


@dataclass(frozen=True)
class RebuiltFile:
    path: str
    builder: str
    source: str | None
    inputs: int
    """Files the recipe pins by digest (0 in a recipe of an older build)."""
    figures: int | None
    """Numbers of an evaluation file that rebuild compares one by one; None for other files."""


@dataclass(frozen=True)
class Rebuilt:
    files: tuple[RebuiltFile, ...]
    tools: tuple[str, ...]
    """``name version`` of every tool the recipes record, each once, in recipe order."""


def rebuilt(manifest: Manifest, evaluations: Mapping[str, Evaluation]) -> Rebuilt | None:
    """The section's rows, or None when no file carries a recipe."""
    rows = []
    tools: dict[str, str] = {}
    for job in plan_jobs(manifest):
        tools |= {k: v for k, v in job.recipe.tools.items() if k not in tools}
        for output in job.outputs:
            if output.kind == "card":
                continue
            evaluation = evaluations.get(output.path) if output.kind == "evaluation" else None
            count = (
                sum(1 for _ in figures(evaluation.model_dump(mode="json", exclude_unset=True)))
                if evaluation is not None
                else None
            )
            rows.append(
                RebuiltFile(output.path, job.recipe.builder, job.recipe.source, len(job.recipe.inputs), count)
            )
    if not rows:
        return None
    return Rebuilt(tuple(rows), tuple(f"{k} {v}" for k, v in tools.items()))
