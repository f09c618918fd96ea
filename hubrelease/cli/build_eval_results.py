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
    from hubrelease.recipes.eval_results_build import build_eval_results as write_eval_results

    result = write_eval_results(manifest, dataset=dataset, benchmark_dir=benchmark_dir)
    for warning in result.warnings:
        output.warn_line(warning)
    if json_mode:
        output.emit_document(
            None, files=[{"path": str(b.path), "size": b.size, "sha256": b.sha256} for b in result.files]
        )
    else:
        for b in result.files:
            output.stdout.print(f"{b.sha256}  {b.path}  ({b.size} bytes)", markup=False)


def register(build_app: typer.Typer) -> None:
    build_app.command("eval-results", epilog=EXAMPLES)(build_eval_results)
