"""SGLang ``bench_serving`` JSONL (one line per run) -> matrix cells keyed on configuration x max_concurrency.

Every latency figure is bench_serving's own summary, never recomputed: the file does not carry
per-request latency, and TPOT needs it. bench_serving (sglang 0.5.23, python/sglang/benchmark/serving.py)
computes, per successful request, ``tpot = (latency - ttft) / (output_len - 1)`` (line 1172) where
``latency`` is stamped at every streamed chunk, the final ``[DONE]`` included (lines 356-357, 391), so
it is not the sum of the ITLs; ``median_tpot_ms = np.median(tpots or 0) * 1000`` (line 1287) and
``output_throughput = sum(output_lens) / dur_s`` (line 1274). Per-user tok/s is 1000 / median_tpot_ms,
the figure seed 000's table prints (80.7 = 1000 / 12.39). ``accept_length`` comes from
``/server_info`` ``internal_states[0].avg_spec_accept_length`` (lines 1643-1658), a server-lifetime
average that only ``--flush-cache`` (line 1519) resets; the file does not record whether it was used.
``server_info`` (line 1847) is the server's resolved ServerArgs and is checked against the configuration.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from hubrelease.evaluation.models import Cell, Configuration, Drafter, LatencySummary, Percentiles, Run
from hubrelease.evaluation.records import Record

_SUMMARIES = ("ttft", "tpot", "itl", "e2e_latency")


@dataclass(frozen=True)
class ServingOptions:
    """What the user states that a bench_serving file cannot: see ``build eval --help``."""

    concurrency_if_unset: int | None = None
    """Concurrency recorded for runs with a null max_concurrency (bench_serving run without it)."""
    flushed_cache: bool = False
    """The runs used ``--flush-cache``, so accept_length covers one run only."""


@dataclass(frozen=True)
class ServerInfo:
    """The parts of bench_serving's ``server_info`` (SGLang's resolved ServerArgs) that identify a configuration."""

    algorithm: str | None
    draft_model: str | None
    model: str | None
    draft_tokens: int | None
    version: str | None

    @classmethod
    def of(cls, record: Record) -> ServerInfo | None:
        info = record.data.get("server_info")
        if info is None:
            return None
        if not isinstance(info, dict):
            raise record.error(f"expected an object, got {type(info).__name__}", "server_info")
        if isinstance(info.get("decode"), list) and info["decode"] and isinstance(info["decode"][0], dict):
            info = info["decode"][0]  # PD disaggregation: bench_serving reads the decode server too

        def text(key: str) -> str | None:
            value = info.get(key)
            return str(value) if value not in (None, "") else None

        tokens = info.get("speculative_num_draft_tokens")
        algorithm = text("speculative_algorithm")
        return cls(
            algorithm=None if algorithm in (None, "NONE") else algorithm,
            draft_model=text("speculative_draft_model_path"),
            model=text("model_path"),
            draft_tokens=tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
            version=text("version"),
        )

    @property
    def key(self) -> tuple[str | None, str | None, str | None, int | None]:
        return (self.algorithm, self.draft_model, self.model, self.draft_tokens)


_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


def same_model(path: str, repo_id: str) -> bool:
    """A served model path names ``repo_id``: a Hub id must be it; a local folder must end in it or its name."""
    path = path.rstrip("/")
    if _HUB_ID.match(path):
        return path == repo_id
    return path.endswith("/" + repo_id) or PurePosixPath(path).name == repo_id.split("/")[-1]


def infer_configuration(name: str, info: ServerInfo | None) -> Configuration:
    """A configuration named ``name``, its method and drafter read from ``server_info``."""
    if info is None or info.algorithm is None:
        return Configuration(id=name, label=name, method="autoregressive")
    drafter = None
    if info.draft_model is not None:
        drafter = Drafter(
            name=PurePosixPath(info.draft_model).name or info.draft_model, repo_id=info.draft_model
        )
    return Configuration(
        id=name, label=name, method=info.algorithm.lower(), drafter=drafter, draft_tokens=info.draft_tokens
    )


def check_server(
    record: Record, info: ServerInfo, configuration: Configuration, run: Run | None
) -> list[str]:
    """Refuse a run whose server contradicts its configuration; return warnings for what may be a local path."""
    speculative = configuration.method != "autoregressive"
    if speculative != (info.algorithm is not None):
        raise record.error(
            f"server ran speculative_algorithm {info.algorithm or 'none'}, but configuration "
            f"{configuration.id!r} is {configuration.method}",
            "server_info",
        )
    drafter = configuration.drafter
    if (
        drafter is not None
        and drafter.repo_id
        and info.draft_model
        and not same_model(info.draft_model, drafter.repo_id)
    ):
        raise record.error(
            f"server's speculative_draft_model_path {info.draft_model!r} is not configuration "
            f"{configuration.id!r}'s drafter {drafter.repo_id!r}",
            "server_info",
        )
    expected_tokens = configuration.draft_tokens
    if expected_tokens is None and run is not None and speculative:
        expected_tokens = run.serving.draft_tokens
    if speculative and expected_tokens is not None and info.draft_tokens not in (None, expected_tokens):
        raise record.error(
            f"server's speculative_num_draft_tokens is {info.draft_tokens}, configuration "
            f"{configuration.id!r} states {expected_tokens}",
            "server_info",
        )
    if run is not None and info.model and not same_model(info.model, run.target.repo_id):
        return [
            f"{record.path}:{record.line}: server_info.model_path {info.model!r} does not name the target "
            f"{run.target.repo_id!r}"
        ]
    return []


def _percentiles(record: Record, metric: str) -> Percentiles | None:
    values = {
        stat: record.number(f"{stat}_{metric}_ms", minimum=0)
        for stat in ("mean", "median", "p99")
        if record.data.get(f"{stat}_{metric}_ms") is not None
    }
    return Percentiles(**values) if values else None


def _failed(record: Record) -> int | None:
    """Requests bench_serving marked failed (a non-empty ``errors`` entry, --output-details only)."""
    errors = record.data.get("errors")
    if errors is None:
        return None
    if not isinstance(errors, list):
        raise record.error(
            f"expected a list with one value per request, got {type(errors).__name__}", "errors"
        )
    return sum(1 for error in errors if error)


@dataclass
class CellResult:
    """A cell and what the build should warn about it."""

    cell: Cell
    info: ServerInfo | None
    warnings: list[str] = field(default_factory=list)


def sglang_cell(record: Record, configuration: str, options: ServingOptions = ServingOptions()) -> CellResult:
    """One bench_serving run as a cell of ``configuration``."""
    warnings: list[str] = []
    if record.data.get("max_concurrency") is None and "max_concurrency" in record.data:
        if options.concurrency_if_unset is None:
            raise record.error(
                "null: the run had no --max-concurrency; pass --concurrency-if-unset N to record it as N",
                "max_concurrency",
            )
        concurrency = options.concurrency_if_unset
    else:
        concurrency = record.integer("max_concurrency", minimum=1)
    duration = record.number("duration")
    if duration <= 0:
        raise record.error(f"zero-duration run ({duration:g} s)", "duration")
    output_tokens = record.integer("total_output_tokens", minimum=0)
    completed = record.integer("completed")
    if completed < 1:
        raise record.error("no completed requests", "completed")
    overall = (
        record.number("output_throughput", minimum=0)
        if record.data.get("output_throughput") is not None
        else output_tokens / duration
    )
    median_ttft = record.number("median_ttft_ms", minimum=0)
    median_tpot = record.number("median_tpot_ms")
    if median_tpot <= 0:
        raise record.error("median TPOT is zero (no request produced more than one token)", "median_tpot_ms")
    accepted: float | None = None
    if record.data.get("accept_length") is not None:
        accepted = record.number("accept_length")
        if accepted <= 0:
            accepted = None  # bench_serving reports -1 (or 0) when the server has no speculative state.
    failed = _failed(record)
    if failed is not None and completed + failed != len(record.data["errors"]):
        raise record.error(
            f"{completed} completed and {failed} failed requests, but {len(record.data['errors'])} requests listed",
            "completed",
        )
    if failed:
        first = next(str(e) for e in record.data["errors"] if e)
        warnings.append(
            f"{record.path}:{record.line}: {failed} request{'s' if failed > 1 else ''} failed and "
            f"{'are' if failed > 1 else 'is'} left out of every figure (first error: {first[:120]})"
        )
    if not all(math.isfinite(value) for value in (overall, 1000.0 / median_tpot)):
        raise record.error("throughput is not a finite number", "median_tpot_ms")
    summaries = {metric: _percentiles(record, metric) for metric in _SUMMARIES}
    cell = Cell(
        configuration=configuration,
        concurrency=concurrency,
        overall_tok_s=overall,
        per_user_tok_s=1000.0 / median_tpot,
        median_ttft_ms=median_ttft,
        median_tpot_ms=median_tpot,
        accepted_length=accepted,
        accepted_length_per_run=None if accepted is None else options.flushed_cache,
        failed_requests=failed,
        request_count=completed,
        duration_s=duration,
        total_output_tokens=output_tokens,
        latency_ms=LatencySummary(**summaries) if any(summaries.values()) else None,
    )
    return CellResult(cell, ServerInfo.of(record), warnings)


def run_name(override: str | None, record: Record) -> str:
    """A run's configuration: its CONFIG=PATH override, else its ``tag``, else the file's stem."""
    return override or str(record.data.get("tag") or "") or record.path.stem


def sglang_cells(
    runs: Sequence[tuple[str | None, Record]],
    configurations: Sequence[Configuration],
    run: Run | None = None,
    options: ServingOptions = ServingOptions(),
) -> tuple[list[Cell], list[str]]:
    """Cells of every run in table order, and warnings; a run's configuration is :func:`run_name`."""
    by_id = {c.id: c for c in configurations}
    first_seen: dict[tuple[str, int], Record] = {}
    servers: dict[str, tuple[ServerInfo, Record]] = {}
    cells, warnings = [], []
    for override, record in runs:
        name = run_name(override, record)
        if name not in by_id:
            raise record.error(
                f"configuration {name!r} is not in the spec ({', '.join(by_id)}); pass the file as CONFIG=PATH",
                "tag",
            )
        result = sglang_cell(record, name, options)
        warnings.extend(result.warnings)
        if result.info is not None:
            warnings.extend(check_server(record, result.info, by_id[name], run))
            earlier_info, earlier = servers.setdefault(name, (result.info, record))
            if earlier_info.key != result.info.key:
                raise record.error(
                    f"server differs from the one of {name!r} at {earlier.path}:{earlier.line} "
                    f"({_describe(result.info)} vs {_describe(earlier_info)})",
                    "server_info",
                )
        cell = result.cell
        key = (cell.configuration, cell.concurrency)
        if key in first_seen:
            earlier = first_seen[key]
            raise record.error(
                f"second run of {key[0]!r} at concurrency {key[1]} (first at {earlier.path}:{earlier.line})",
                "max_concurrency",
            )
        first_seen[key] = record
        cells.append(cell)
    unchecked = sum(1 for _, record in runs if record.data.get("server_info") is None)
    if unchecked:
        warnings.append(
            f"{unchecked} run{'s carry' if unchecked > 1 else ' carries'} no server_info (bench_serving could not read "
            "/server_info): their configuration is not checked against the server"
        )
    lifetime = sum(1 for c in cells if c.accepted_length_per_run is False)
    if lifetime:
        warnings.append(
            f"accept_length of {lifetime} run{'s' if lifetime > 1 else ''} is the server's lifetime average "
            "(warmup and earlier runs included) unless bench_serving ran with --flush-cache; "
            "pass --flushed-cache if it did"
        )
    order = list(by_id)
    # Table order: configurations as the spec lists them, then rising concurrency.
    return sorted(cells, key=lambda c: (order.index(c.configuration), c.concurrency)), warnings


def _describe(info: ServerInfo) -> str:
    parts: list[Any] = [info.algorithm or "autoregressive"]
    if info.draft_model:
        parts.append(info.draft_model)
    if info.model:
        parts.append(f"target {info.model}")
    return ", ".join(map(str, parts))
