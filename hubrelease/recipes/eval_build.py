"""``build eval`` as one library call: raw runs to an evaluation file, recorded with its recipe.

It lives with the recipes, as ``build_dataset_card`` does: the builder computes the evaluation, the
recipes record how it was computed so that ``rebuild`` can run it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hubrelease.builders.evaluation import (
    Source,
    build_evaluation,
    evaluation_json,
    llama_options,
    write_evaluation,
)
from hubrelease.errors import InputError
from hubrelease.evaluation.infer import SpecOptions
from hubrelease.evaluation.ingest import ServingOptions
from hubrelease.evaluation.models import Evaluation
from hubrelease.evaluation.spec import EvaluationSpec, load_spec
from hubrelease.manifest.record import EvaluationRecorder
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.recipes.record import eval_recipe


@dataclass(frozen=True, kw_only=True)
class EvalBuildOptions:
    """Everything ``hubrelease build eval`` takes, in one object built by keyword."""

    sources: tuple[str, ...]
    """Raw runs as typed: ``PATH`` or ``CONFIG=PATH``."""
    out: Path
    spec: Path | None = None
    prompts: Path | None = None
    spec_options: SpecOptions = field(default_factory=SpecOptions)
    serving_options: ServingOptions = field(default_factory=ServingOptions)
    columns: str | None = None
    """llama-server rows: ``FIELD=COLUMN,...`` for columns no built-in alias covers."""
    manifest: Path | None = None
    """Record the written file in this manifest's evaluations; the rows' sha columns are checked
    against its digests, as ``rebuild`` checks them when it runs the recipe again."""
    check_digests: Path | None = None
    """Check the rows' drafter and server sha columns against this release's digests; record nothing."""


def build_eval(options: EvalBuildOptions, *, progress: Progress = NULL_PROGRESS) -> Evaluation:
    """Compute the evaluation, write it atomically to ``options.out`` and, with ``options.manifest``,
    record it there with its recipe.

    The manifest is loaded and checked first (``out`` inside its release folder), so a bad one costs
    no build and leaves no file behind; nothing is written unless the whole evaluation validates.
    """
    if options.manifest is not None and options.check_digests is not None:
        raise InputError(
            "--manifest already checks the sha columns against the release it records in: drop --check-digests"
        )
    recorder = EvaluationRecorder.prepare(options.manifest, options.out) if options.manifest else None
    sources = [Source.parse(text) for text in options.sources]
    plan = load_spec(options.spec) if options.spec is not None else EvaluationSpec()
    release = options.manifest or options.check_digests
    evaluation = build_evaluation(
        sources,
        plan,
        spec_options=options.spec_options,
        prompts=options.prompts,
        relative_to=options.out.parent,
        serving_options=options.serving_options,
        llama_options=llama_options(options.columns, options.serving_options.allow_incomplete, release),
        progress=progress,
    )
    write_evaluation(evaluation, options.out)
    if recorder is not None:
        recipe = eval_recipe(
            recorder.root,
            options.out,
            sources,
            options.spec,
            options.prompts,
            spec_options=options.spec_options,
            serving_options=options.serving_options,
            columns=options.columns,
        )
        recorder.record(evaluation_json(evaluation).encode("utf-8"), recipe)
    return evaluation
