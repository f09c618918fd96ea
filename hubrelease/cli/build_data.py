"""`hubrelease build eval` and `hubrelease build dataset-card`: release files computed from measured data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hubrelease.builders.evaluation import Source, build_evaluation, write_evaluation
from hubrelease.cli import output
from hubrelease.cli.options import JsonOpt
from hubrelease.evaluation.spec import load_spec

EVAL_EXAMPLES = """
Examples:

  # bench_serving JSONL, one file per configuration (CONFIG=PATH) or tagged lines
  hubrelease build eval autoregressive=runs/ar.jsonl dflash2=runs/dflash2.jsonl \\
      --spec eval-spec.yaml --prompts prompts.jsonl --out spark-evaluation.json

  # llama-server per-request rows: A/B and n_max sweep as the spec describes
  hubrelease build eval bench/results-ab.csv bench/results-sweep.csv --spec ab-spec.yaml --out evaluation.json
"""


def build_eval(
    sources: Annotated[
        list[str],
        typer.Argument(
            help="Raw runs: bench_serving JSONL or llama-server CSV/JSONL, as PATH or CONFIG=PATH."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Evaluation JSON to write.")],
    spec: Annotated[
        Path,
        typer.Option("--spec", help="Run metadata and analysis plan (YAML or JSON).", show_default=False),
    ],
    prompts: Annotated[
        Path | None,
        typer.Option("--prompts", help="Prompts file; its sha256 is recorded in the prompt set."),
    ] = None,
    json_mode: JsonOpt = False,
) -> None:
    """Compute an evaluation JSON (cells, paired comparisons, sweeps) from raw benchmark runs."""
    plan = load_spec(spec)
    with output.progress(json_mode) as progress:
        evaluation = build_evaluation(
            [Source.parse(text) for text in sources], plan, prompts=prompts, progress=progress
        )
    write_evaluation(evaluation, out)
    if json_mode:
        output.emit_json(
            {
                "schema_version": 1,
                "out": str(out),
                "cells": len(evaluation.cells),
                "comparisons": [c.id for c in evaluation.comparisons],
                "sweeps": [s.id for s in evaluation.sweeps],
                "sources": [s.model_dump() for s in evaluation.provenance.sources],
            }
        )
    else:
        output.info_line(
            f"wrote {out}: {len(evaluation.cells)} cells, {len(evaluation.comparisons)} comparisons, "
            f"{len(evaluation.sweeps)} sweeps from {len(sources)} files"
        )


def register(app: typer.Typer) -> None:
    app.command("eval", epilog=EVAL_EXAMPLES)(build_eval)
