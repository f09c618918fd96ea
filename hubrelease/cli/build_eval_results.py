"""`hubrelease build eval-results MANIFEST`: the Hub's .eval_results/*.yaml from the release's evaluation files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import JsonOpt, ManifestArg

EXAMPLES = """
Examples:

  hubrelease build eval-results hubrelease.yaml

  hubrelease build eval-results hubrelease.yaml --dataset acme/serving-prompts@a1b2c3... --benchmark ../serving-prompts

Writes .eval_results/<evaluation file name>.yaml in the release folder for every evaluation file pinned
by sha256, and records each as an artifact of the manifest (size, sha256, recipe), so verify checks it
and push publishes it with the evaluation file in one commit. The entries name a benchmark dataset
(--dataset, or the one dataset pinned with role evaluation): the Hub shows them only where that dataset
has an eval.yaml declaring their task ids, which --benchmark DIR writes (DIR/eval.yaml, beside the
prompt set's dataset release). Exit codes: 0 written, 2 invalid input.
"""


def build_eval_results(
    manifest: ManifestArg,
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            help="The Hub benchmark dataset the numbers are on (ORG/NAME[@COMMIT]); default: the one dataset "
            "pinned with role evaluation.",
        ),
    ] = None,
    benchmark_dir: Annotated[
        Path | None,
        typer.Option(
            "--benchmark",
            help="Also write DIR/eval.yaml, declaring each task id the entries use, for the benchmark dataset.",
            file_okay=False,
        ),
    ] = None,
    json_mode: JsonOpt = False,
) -> None:
    """Write each pinned evaluation file's numbers as .eval_results entries (huggingface_hub's EvalResultEntry)."""
    from hubrelease.builders.safetensors_drafter import BuiltFile
    from hubrelease.evaluation.eval_results import BUILDER, FOLDER, benchmark_yaml, eval_results_path, render
    from hubrelease.fsutil import atomic_write_bytes
    from hubrelease.manifest import load_manifest
    from hubrelease.manifest.record import ArtifactRecorder
    from hubrelease.manifest.root import release_root
    from hubrelease.recipes.inputs import file_inputs
    from hubrelease.recipes.record import make_recipe

    recorder = ArtifactRecorder.prepare(manifest, release_root(load_manifest(manifest), manifest) / FOLDER)
    release = recorder.target.manifest
    root = recorder.root
    pinned = [e for e in release.evaluation_files if e.sha256]
    for skipped in (e for e in release.evaluation_files if not e.sha256):
        output.warn_line(
            f"{skipped.path}: not pinned by sha256 (`hubrelease add`); no eval results written for it"
        )
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
    shown = [b for b, _ in built]
    if benchmark_dir is not None and declared is not None:
        benchmark_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(benchmark_dir / "eval.yaml", declared)
        shown.append(BuiltFile.of(benchmark_dir / "eval.yaml"))
    if json_mode:
        output.emit_document(
            None, files=[{"path": str(b.path), "size": b.size, "sha256": b.sha256} for b in shown]
        )
    else:
        for b in shown:
            output.stdout.print(f"{b.sha256}  {b.path}  ({b.size} bytes)", markup=False)


def register(build_app: typer.Typer) -> None:
    build_app.command("eval-results", epilog=EXAMPLES)(build_eval_results)
