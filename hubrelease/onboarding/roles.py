"""Guess each file's role, so a first manifest needs no hand-editing to be useful.

Weights are variants, tabular data is data, anything under a bench folder is a benchmark, and
the rest (README, config, tokenizer, licence, images) documents the release. One weights file is
recommended: the one the user named, else the largest.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from hubrelease.errors import InputError
from hubrelease.manifest.models import ArtifactRole
from hubrelease.onboarding.facts import FileFacts

WEIGHT_SUFFIXES = (".gguf", ".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".onnx", ".npz")
DATA_SUFFIXES = (".parquet", ".arrow", ".jsonl", ".csv", ".tsv", ".jsonl.gz", ".jsonl.zst")
_BENCH_DIRS = ("bench", "benchmark", "benchmarks", "eval", "evals", "results")


def guess_role(name: str) -> ArtifactRole:
    """The role a file most likely plays, from its name alone."""
    path = PurePosixPath(name)
    lower = name.lower()
    if lower.endswith(WEIGHT_SUFFIXES):
        return "variant"
    if any(part.lower() in _BENCH_DIRS for part in path.parts[:-1]):
        return "benchmark"
    if lower.endswith(DATA_SUFFIXES):
        return "data"
    return "doc"


def artifact_entries(
    facts: Sequence[FileFacts], recommended: str | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Manifest ``artifacts`` entries and ``evaluations`` entries (path, size, sha256) for ``facts``, roles guessed.

    ``recommended`` names the file to recommend; by default the largest weights file is.
    """
    names = {f.name for f in facts}
    if recommended is not None and recommended not in names:
        raise InputError(f"--recommended {recommended!r} is not one of the files found", field="recommended")
    if recommended is None:
        weights = [f for f in facts if guess_role(f.name) == "variant"]
        if weights:
            recommended = max(weights, key=lambda f: (f.size, f.name)).name
    artifacts: list[dict[str, Any]] = []
    evaluations: list[dict[str, Any]] = []
    for item in facts:
        if item.evaluation and item.name != recommended:
            evaluations.append({"path": item.name, "size": item.size, "sha256": item.sha256})
            continue
        role: ArtifactRole = "recommended" if item.name == recommended else guess_role(item.name)
        artifacts.append(artifact_entry(item, role))
    return artifacts, evaluations


def artifact_entry(
    item: FileFacts, role: ArtifactRole | None, path_in_repo: str | None = None
) -> dict[str, Any]:
    """One ``artifacts`` entry in the manifest's key order; ``None`` values are left out.

    ``item.name`` is the file's place in the release folder; ``path_in_repo`` its place on the Hub.
    """
    path = path_in_repo or item.name
    return {
        "path": path,
        "local": item.name if path != item.name else None,
        "size": item.size,
        "sha256": item.sha256,
        "role": role,
        "composition": item.composition,
    }
