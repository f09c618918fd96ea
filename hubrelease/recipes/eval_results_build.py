"""``build eval-results`` as one library call: the Hub's ``.eval_results/*.yaml`` for each pinned
evaluation file, each recorded as an artifact with the recipe that writes it again."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hubrelease.builders.safetensors_drafter import BuiltFile
from hubrelease.evaluation.eval_results import BUILDER, FOLDER, benchmark_yaml, eval_results_path, render
from hubrelease.fsutil import atomic_write_bytes
from hubrelease.manifest import load_manifest
from hubrelease.manifest.record import ArtifactRecorder
from hubrelease.manifest.root import release_root
from hubrelease.recipes.inputs import file_inputs
from hubrelease.recipes.record import make_recipe


@dataclass(frozen=True)
class EvalResultsBuild:
    """The files written (entries, then the benchmark's eval.yaml) and the evaluations left out."""

    files: list[BuiltFile]
    warnings: list[str]


def build_eval_results(
    manifest: Path, *, dataset: str | None = None, benchmark_dir: Path | None = None
) -> EvalResultsBuild:
    """Write and record the entries of every evaluation file pinned by sha256 (``dataset``: the
    benchmark dataset they are on); with ``benchmark_dir``, also its ``eval.yaml`` declaring them."""
    recorder = ArtifactRecorder.prepare(manifest, release_root(load_manifest(manifest), manifest) / FOLDER)
    release = recorder.target.manifest
    root = recorder.root
    pinned = [e for e in release.evaluation_files if e.sha256]
    warnings = [
        f"{e.path}: not pinned by sha256 (`hubrelease add`); no eval results written for it"
        for e in release.evaluation_files
        if not e.sha256
    ]
    rendered = [(root / eval_results_path(e.path), e, render(release, e, root, dataset)) for e in pinned]
    declared = benchmark_yaml(release, root, dataset) if benchmark_dir is not None else None
    built = []
    for path, evaluation, data in rendered:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, data)
        options = {"dataset": dataset} if dataset else {}
        inputs = file_inputs([root / evaluation.path], root)
        recipe = make_recipe(
            BUILDER, root, source=root / evaluation.path, out=path, options=options, inputs=inputs
        )
        built.append((BuiltFile.of(path), {"recipe": recipe, "role": "doc"}))
    recorder.record([(b.path, {"size": b.size, "sha256": b.sha256, **fields}) for b, fields in built])
    files = [b for b, _ in built]
    if benchmark_dir is not None and declared is not None:
        benchmark_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(benchmark_dir / "eval.yaml", declared)
        files.append(BuiltFile.of(benchmark_dir / "eval.yaml"))
    return EvalResultsBuild(files, warnings)
