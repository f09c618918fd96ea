"""Which files each recipe of a manifest wrote: the jobs ``rebuild`` runs, the card and the BOM count.

Read from the manifest alone (no recipe runs here), so the card's Reproducibility section, the BOM
and the pull-request gate read the same jobs as ``rebuild`` without importing it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from hubrelease.manifest.models import Manifest, Recipe

Kind = Literal["artifact", "evaluation", "card"]
_SHARD = re.compile(r"-\d{5}-of-\d{5}(?=\.gguf$)")


@dataclass(frozen=True)
class Output:
    """A file the manifest says a recipe wrote."""

    kind: Kind
    path: str
    """Repo path (how reports name it)."""
    local: str
    """Path in the release folder (where the rebuilt copy goes under the work folder)."""
    size: int | None
    sha256: str | None


@dataclass(frozen=True)
class Job:
    recipe: Recipe
    out: str
    outputs: tuple[Output, ...]


def _default_out(recipe: Recipe, path: str) -> str:
    """Where an older recipe (no ``out``) wrote: the GGUF file itself, or the artifact's folder."""
    if recipe.builder == "gguf-drafter":
        return _SHARD.sub("", path)
    if recipe.builder in ("eval", "dataset-card"):
        return path
    return str(PurePosixPath(path).parent)


def plan_jobs(manifest: Manifest) -> list[Job]:
    """One job per recipe and output place, in manifest order (artifacts, evaluations, the card)."""
    found: list[tuple[Recipe, Output]] = [
        (a.recipe, Output("artifact", a.path, a.local_path, a.size, a.sha256))
        for a in manifest.artifacts
        if a.recipe is not None
    ]
    found += [
        (e.recipe, Output("evaluation", e.path, e.path, e.size, e.sha256))
        for e in manifest.evaluation_files
        if e.recipe is not None
    ]
    card = manifest.card
    if card is not None and card.recipe is not None:
        found.append((card.recipe, Output("card", card.output, card.output, card.size, card.sha256)))
    jobs: dict[tuple[str, str], tuple[Recipe, str, list[Output]]] = {}
    for recipe, output in found:
        out = recipe.out or _default_out(recipe, output.local)
        key = (recipe.model_dump_json(), out)
        jobs.setdefault(key, (recipe, out, []))[2].append(output)
    return [Job(recipe, out, tuple(outputs)) for recipe, out, outputs in jobs.values()]
