"""`hubrelease build eval` and `hubrelease build dataset-card`: release files computed from measured data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import JsonOpt

EVAL_EXAMPLES = """
Examples:

  # bench_serving JSONL: configurations from tags (or CONFIG=PATH) and server_info
  hubrelease build eval runs/*.jsonl --hardware 'NVIDIA H200' --flushed-cache --out h200-evaluation.json

  # llama-server rows (seed 001's layout): a preregistered A/B and the other arm's n_max sweep
  hubrelease build eval bench/results-retrain-ab.csv bench/results-m1q4.csv --hardware 'NVIDIA GB10' \\
      --target org/target-GGUF --baseline A --treatment B --primary n_max=3 --fit-range 1:12 --out evaluation.json

  # everything else (engine commit, labels, design, notes) from a spec; recorded in the release
  hubrelease build eval autoregressive=runs/ar.jsonl dflash2=runs/dflash2.jsonl \\
      --spec eval-spec.yaml --prompts prompts.jsonl --out spark-evaluation.json --manifest hubrelease.yaml

  # the rows' drafter/server sha columns checked against a release, nothing recorded
  hubrelease build eval bench/results.csv --spec eval-spec.yaml --out e.json --check-digests hubrelease.yaml

Exit codes: 0 written, 2 invalid input (malformed runs, spec errors, a refused server_info, grid or
digest); nothing is written unless the whole evaluation validates.
"""


def build_eval_command(
    sources: Annotated[
        list[str],
        typer.Argument(
            help="Raw runs: bench_serving JSONL, vllm bench serve JSON or llama-server CSV/JSONL, as PATH or CONFIG=PATH."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Evaluation JSON to write.")],
    spec: Annotated[
        Path | None,
        typer.Option(
            "--spec",
            help="What options and runs cannot say: run metadata, configurations, analysis plan (YAML or JSON; "
            "`hubrelease schema --eval-spec`).",
            show_default=False,
        ),
    ] = None,
    hardware: Annotated[
        str | None, typer.Option("--hardware", help="Machine the runs were measured on (e.g. 'NVIDIA H200').")
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target", help="Target model as REPO or REPO@COMMIT (bench_serving: default server_info's)."
        ),
    ] = None,
    *,
    title: Annotated[str | None, typer.Option("--title", help="Display title of the evaluation.")] = None,
    baseline: Annotated[
        str | None, typer.Option("--baseline", help="llama-server rows: baseline arm of a paired A/B.")
    ] = None,
    treatment: Annotated[
        str | None, typer.Option("--treatment", help="llama-server rows: treatment arm of a paired A/B.")
    ] = None,
    primary: Annotated[
        str | None,
        typer.Option("--primary", help="Preregistered primary setting of the A/B, e.g. n_max=3."),
    ] = None,
    fit_range: Annotated[
        str | None,
        typer.Option(
            "--fit-range", help="Settings MIN:MAX of sweeps' step-time fit, e.g. 1:12 (default: all)."
        ),
    ] = None,
    prompts: Annotated[
        Path | None,
        typer.Option("--prompts", help="Prompts file; its sha256 is recorded in the prompt set."),
    ] = None,
    concurrency_if_unset: Annotated[
        int | None,
        typer.Option(
            "--concurrency-if-unset",
            min=1,
            help="Concurrency to record for bench_serving runs with a null max_concurrency (no --max-concurrency).",
        ),
    ] = None,
    flushed_cache: Annotated[
        bool,
        typer.Option(
            "--flushed-cache",
            help="The bench_serving runs used --flush-cache, so accept_length is per run (the file does not say).",
        ),
    ] = False,
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns",
            help="llama-server rows: FIELD=COLUMN,... for columns no built-in alias covers (e.g. prompt_id=task).",
        ),
    ] = None,
    allow_incomplete: Annotated[
        bool,
        typer.Option(
            "--allow-incomplete",
            help="Build from a grid with holes: missing llama-server runs or serving matrix cells (warned about).",
        ),
    ] = False,
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest",
            help="Record the written file in this release manifest's evaluations: size, sha256 and the "
            "recipe `hubrelease rebuild` re-runs (the rows' drafter/server sha columns are checked against it).",
        ),
    ] = None,
    check_digests: Annotated[
        Path | None,
        typer.Option(
            "--check-digests",
            help="Check the rows' drafter/server sha columns against this release's digests; record nothing.",
        ),
    ] = None,
    json_mode: JsonOpt = False,
) -> None:
    """Compute an evaluation JSON (cells, paired comparisons, sweeps) from raw benchmark runs."""
    from hubrelease.evaluation.infer import SpecOptions
    from hubrelease.evaluation.ingest import ServingOptions
    from hubrelease.recipes.eval_build import EvalBuildOptions, build_eval

    options = EvalBuildOptions(
        sources=tuple(sources),
        out=out,
        spec=spec,
        prompts=prompts,
        spec_options=SpecOptions(
            hardware=hardware,
            target=target,
            title=title,
            baseline=baseline,
            treatment=treatment,
            primary=primary,
            fit_range=fit_range,
        ),
        serving_options=ServingOptions(
            concurrency_if_unset=concurrency_if_unset,
            flushed_cache=flushed_cache,
            allow_incomplete=allow_incomplete,
        ),
        columns=columns,
        manifest=manifest,
        check_digests=check_digests,
    )
    with output.progress(json_mode) as progress:
        evaluation = build_eval(options, progress=progress)
    warnings = evaluation.provenance.warnings
    if json_mode:
        output.emit_document(
            None,
            out=str(out),
            cells=len(evaluation.cells),
            comparisons=[c.id for c in evaluation.comparisons],
            sweeps=[s.id for s in evaluation.sweeps],
            sources=[s.model_dump() for s in evaluation.provenance.sources],
            warnings=warnings,
        )
    else:
        for warning in warnings:
            output.warn_line(warning)
        output.info_line(
            f"wrote {out}: {len(evaluation.cells)} cells, {len(evaluation.comparisons)} comparisons, "
            f"{len(evaluation.sweeps)} sweeps"
            + (
                f", {len(evaluation.by_category)} results per prompt category"
                if evaluation.by_category
                else ""
            )
            + f" from {len(sources)} files"
        )


DATASET_CARD_EXAMPLES = """
Examples:

  # shards under data/, stored per-row completion_tokens
  hubrelease build dataset-card data --out README.md --manifest hubrelease.yaml

  # no stored counts: tokenize the assistant turns
  hubrelease build dataset-card data --out README.md --tokenizer tokenizer.json

  # no manifest: state licence, source and language yourself (nothing is assumed)
  hubrelease build dataset-card data --out README.md --license cc-by-4.0 \
      --source-dataset nvidia/Nemotron-Post-Training-Dataset-v2 --language en

With --manifest, the written README.md is recorded there as the card (template: none, size, sha256).
"""


def build_dataset_card_command(
    data: Annotated[Path, typer.Argument(help="Folder of .parquet or .jsonl conversation shards.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Card to write (README.md).")],
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest",
            help="Dataset release manifest: record the card there as its card (size, sha256, recipe); "
            "title, licence, sources and credit are read from it.",
        ),
    ] = None,
    tokenizer: Annotated[
        Path | None,
        typer.Option(
            "--tokenizer", help="tokenizer.json: count assistant tokens instead of the stored column."
        ),
    ] = None,
    count_column: Annotated[
        str, typer.Option("--count-column", help="Column holding per-row completion token counts.")
    ] = "completion_tokens",
    *,
    license_id: Annotated[
        str | None, typer.Option("--license", help="Hub licence id (default: the manifest's; else none).")
    ] = None,
    source_dataset: Annotated[
        list[str] | None,
        typer.Option(
            "--source-dataset", help="Dataset the rows derive from (repeatable; adds to pins.datasets)."
        ),
    ] = None,
    language: Annotated[
        list[str] | None, typer.Option("--language", help="Language code of the text (repeatable).")
    ] = None,
    attribution: Annotated[
        list[str] | None, typer.Option("--attribution", help="Credit line the card must carry (repeatable).")
    ] = None,
    json_mode: JsonOpt = False,
) -> None:
    """Write a dataset card whose counts, tallies and digests are computed from the shards."""
    from hubrelease.builders.dataset_card import CardOptions
    from hubrelease.recipes.record import build_dataset_card

    facts = CardOptions(
        license=license_id,
        source_datasets=tuple(source_dataset or ()),
        languages=tuple(language or ()),
        attribution=tuple(attribution or ()),
    )

    with output.progress(json_mode) as progress:
        summary = build_dataset_card(
            data,
            out,
            manifest=manifest,
            tokenizer=tokenizer,
            count_column=count_column,
            options=facts,
            progress=progress,
        )
    if json_mode:
        output.emit_document(
            None,
            out=str(out),
            conversations=summary.conversations,
            completion_tokens=summary.completion_tokens,
            categories=summary.categories,
            licenses=summary.licenses,
            generators=summary.generators,
            content_sha256=summary.content_sha256,
            shards=[
                {"path": s.path, "rows": s.rows, "bytes": s.file_bytes, "sha256": s.sha256}
                for s in summary.shards
            ],
        )
    else:
        output.info_line(
            f"wrote {out}: {summary.conversations:,} conversations, {summary.completion_tokens:,} completion tokens, "
            f"{len(summary.shards)} shards, content sha256 {summary.content_sha256}"
        )


def register(app: typer.Typer) -> None:
    app.command("eval", epilog=EVAL_EXAMPLES)(build_eval_command)
    app.command("dataset-card", epilog=DATASET_CARD_EXAMPLES)(build_dataset_card_command)
