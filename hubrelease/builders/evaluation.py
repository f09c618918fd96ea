"""Raw benchmark runs + a spec -> one evaluation JSON: every number computed, every input digested.

Serving results (SGLang bench_serving, ``vllm bench serve``) become matrix cells; llama-server rows
feed the spec's comparisons and sweeps; llama-spec-bench attempts become results per prompt category
(as do cells and comparisons whose prompts have one). Each record is read by the tool that wrote it
(``hubrelease.evaluation.ingest.source_of``), so files of every kind can be given in one call.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from hubrelease import __version__
from hubrelease.errors import BuildError, FormatError
from hubrelease.evaluation.analysis import compare_arms, sweep
from hubrelease.evaluation.categories import bench_by_category, categorise_requests, serving_by_category
from hubrelease.evaluation.infer import SpecOptions, complete_analysis, complete_configurations, complete_run
from hubrelease.evaluation.ingest import ServingOptions, ServingSource, source_of
from hubrelease.evaluation.ingest.llama_server import (
    Columns,
    LlamaOptions,
    MeasuredRequest,
    RowDefaults,
    check_digests,
    check_grid,
    check_unique,
    number_repetitions,
    parse_run,
)
from hubrelease.evaluation.ingest.serving import serving_cells
from hubrelease.evaluation.ingest.spec_bench import BenchAttempt, SpecBench, parse_attempt
from hubrelease.evaluation.load import SCHEMA_COMMAND
from hubrelease.evaluation.models import (
    SCHEMA_VERSION,
    Comparison,
    Engine,
    Evaluation,
    PromptSet,
    Provenance,
    Run,
    SourceFile,
)
from hubrelease.evaluation.provenance import unidentified_drafters
from hubrelease.evaluation.records import Record, read_records
from hubrelease.evaluation.spec import EvaluationSpec
from hubrelease.fsutil import atomic_write_text
from hubrelease.hashing import sha256_file
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.validation import problems


@dataclass(frozen=True)
class Source:
    """A raw benchmark file, optionally naming the configuration its bench_serving lines measured."""

    path: Path
    configuration: str | None = None

    @classmethod
    def parse(cls, text: str) -> Source:
        """``PATH`` or ``CONFIG=PATH`` (an existing file whose name contains '=' stays a path)."""
        name, sep, rest = text.partition("=")
        if sep and name and rest and not Path(text).exists():
            return cls(Path(rest), name)
        return cls(Path(text))


def build_evaluation(
    sources: Sequence[Source],
    spec: EvaluationSpec = EvaluationSpec(),
    *,
    spec_options: SpecOptions = SpecOptions(),
    prompts: Path | None = None,
    relative_to: Path | None = None,
    serving_options: ServingOptions = ServingOptions(),
    llama_options: LlamaOptions = LlamaOptions(),
    progress: Progress = NULL_PROGRESS,
) -> Evaluation:
    """Read every source, compute cells, comparisons and sweeps, and return the validated evaluation.

    Source paths are recorded relative to ``relative_to`` (the output's folder), so the same build
    run from another working directory writes the same bytes. What could not be checked is in
    ``provenance.warnings``.
    """
    try:
        return _build(
            sources,
            spec,
            spec_options,
            prompts,
            relative_to,
            serving_options=serving_options,
            llama_options=llama_options,
            progress=progress,
        )
    except ValidationError as exc:
        # A computed value the schema refuses (e.g. an overflow to infinity) is bad input, not a bug.
        first = problems(exc, SCHEMA_COMMAND)[0]
        raise BuildError(f"computed an invalid evaluation: {first.field}: {first.message}") from None


def _build(
    sources: Sequence[Source],
    spec: EvaluationSpec,
    spec_options: SpecOptions,
    prompts: Path | None,
    relative_to: Path | None,
    *,
    serving_options: ServingOptions,
    llama_options: LlamaOptions,
    progress: Progress,
) -> Evaluation:
    serving: list[tuple[ServingSource, str | None, Record]] = []
    requests: list[MeasuredRequest] = []
    attempts: list[tuple[str, BenchAttempt]] = []
    files = []
    progress.start(sum(s.path.stat().st_size for s in sources if s.path.is_file()), "reading benchmark runs")
    boots: dict[str, int] = defaultdict(int)
    for source in sources:
        records = list(read_records(source.path))
        if not records:
            raise FormatError("no benchmark records in file", path=source.path)
        # Rows without arm or boot (raw /completion responses) take the file's name and its order.
        arm = source.configuration or source.path.stem
        boots[arm] += 1
        defaults = RowDefaults(arm=arm, boot=boots[arm])
        for record in records:
            tool = source_of(record)
            if isinstance(tool, ServingSource):
                serving.append((tool, source.configuration, record))
            elif isinstance(tool, SpecBench):
                if (attempt := parse_attempt(record)) is not None:
                    attempts.append((arm, attempt))
            else:
                requests.append(parse_run(record, llama_options.columns, defaults))
        files.append(
            SourceFile(
                path=_recorded_path(source.path, relative_to),
                sha256=sha256_file(source.path),
                records=len(records),
            )
        )
        progress.advance(source.path.stat().st_size)
    progress.finish()
    requests = categorise_requests(number_repetitions(requests), spec.prompt_categories)
    check_unique(requests)
    warnings = check_grid(requests, llama_options.allow_incomplete)
    check_digests(requests, llama_options.artifacts, llama_options.binaries)
    if not (serving or requests or attempts):
        raise BuildError(
            "nothing to build: no bench_serving runs, llama-server rows or llama-spec-bench attempts"
        )
    run = complete_run(spec, spec_options, serving, requests)
    if attempts and not (serving or requests):
        run = _bench_run(run, spec, attempts)
    if prompts is not None:
        run = run.model_copy(
            update={"prompt_set": run.prompt_set.model_copy(update={"sha256": sha256_file(prompts)})}
        )
    configurations = complete_configurations(spec, serving)
    comparison_specs, sweep_specs = complete_analysis(spec, spec_options, requests)
    comparisons: list[Comparison] = [compare_arms(requests, c) for c in comparison_specs]
    sweeps = []
    for sweep_spec in sweep_specs:
        result, pairs = sweep(requests, sweep_spec)
        sweeps.append(result)
        comparisons.extend(pairs)
    if not (serving or comparisons or sweeps or attempts):
        raise BuildError(
            "nothing to build from the llama-server rows: name the A/B with --baseline/--treatment, "
            "or give comparisons or sweeps in a --spec file"
        )
    cells, serving_warnings = serving_cells(serving, configurations, run, serving_options)
    warnings.extend(serving_warnings)
    by_category = serving_by_category(serving, spec.prompt_categories, serving_options)
    by_category += bench_by_category(attempts, spec.prompt_categories)
    warnings = _relocated(warnings, {str(s.path): f.path for s, f in zip(sources, files, strict=True)})
    title = spec.title or spec_options.title or f"Serving evaluation on {run.hardware.name}"
    # Validate through the model (not construct) so cross-field rules run on the assembled file too.
    evaluation = Evaluation.model_validate(
        {
            "schema_version": SCHEMA_VERSION,
            "title": title,
            "run": run,
            "configurations": configurations,
            "cells": cells,
            "comparisons": comparisons,
            "sweeps": sweeps,
            "by_category": by_category,
            "notes": spec.notes,
            "provenance": Provenance(
                generator=f"hubrelease {__version__} build eval", sources=files, warnings=warnings
            ),
        }
    )
    unidentified = unidentified_drafters(
        evaluation, llama_options.release_names, list(llama_options.artifacts)
    )
    if unidentified:
        raise BuildError(f"{unidentified[0]} (--manifest's release publishes drafter files)")
    return evaluation


def _bench_run(run: Run, spec: EvaluationSpec, attempts: Sequence[tuple[str, BenchAttempt]]) -> Run:
    """A llama-spec-bench-only run: ik_llama.cpp's binary, its tasks counted, unless the spec says."""
    update: dict[str, object] = {}
    if spec.run.engine is None:
        update["engine"] = Engine(name=SpecBench.engine)
    if spec.run.prompt_set is None:
        update["prompt_set"] = PromptSet(
            name="llama-spec-bench tasks", total=len({a.task for _, a in attempts})
        )
    return run.model_copy(update=update)


def llama_options(columns: str | None, allow_incomplete: bool, manifest: Path | None) -> LlamaOptions:
    """llama-server reading options from the CLI's ``--columns``, ``--allow-incomplete`` and ``--manifest``."""
    artifacts: dict[str, str | None] = {}
    binaries: list[str] = []
    names: list[str] = []
    if manifest is not None:
        from hubrelease.manifest import load_manifest

        release = load_manifest(manifest)
        artifacts = {artifact.path: artifact.sha256 for artifact in release.artifacts}
        binaries = [binary.sha256 for engine in release.pins.engines for binary in engine.binaries]
        names = [name for name in (release.release.repo_id, release.release.title) if name]
    return LlamaOptions(Columns.parse(columns), allow_incomplete, artifacts, binaries, names)


def evaluation_json(evaluation: Evaluation) -> str:
    """The canonical text of an evaluation file (2-space indent, trailing newline)."""
    return evaluation.model_dump_json(indent=2) + "\n"


def _relocated(warnings: list[str], recorded: dict[str, str]) -> list[str]:
    """Warnings with each source as ``provenance.sources`` records it, not as typed: they are written
    into the file and onto the card, where an absolute path would be the build machine's."""
    prefixes = sorted(recorded, key=len, reverse=True)  # the longest typed path wins over a prefix of it
    out = []
    for warning in warnings:
        typed = next((p for p in prefixes if warning.startswith(f"{p}:")), None)
        out.append(recorded[typed] + warning[len(typed) :] if typed is not None else warning)
    return out


def _recorded_path(path: Path, relative_to: Path | None) -> str:
    if relative_to is None:
        return path.as_posix()
    return Path(os.path.relpath(path.resolve(), relative_to.resolve())).as_posix()


def write_evaluation(evaluation: Evaluation, out: Path) -> None:
    """Write atomically: a failed build never leaves a half-written file."""
    atomic_write_text(out, evaluation_json(evaluation))
