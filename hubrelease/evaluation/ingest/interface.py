"""One interface for every benchmark tool's output, one module per tool (as pip-audit's dependency sources).

A source recognises its own records and reads one into what ``build eval`` assembles: a serving run
(SGLang bench_serving, ``vllm bench serve``: one matrix cell each) or a request row (llama-server:
one request of a paired design). What a tool's file cannot say (its concurrency when unset, whether
the server's counters were reset) comes from ``ServingOptions``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

from hubrelease.evaluation.models import Cell, LatencySummary, Percentiles
from hubrelease.evaluation.records import Record


@dataclass(frozen=True, kw_only=True)
class ServingOptions:
    """What the user states that a serving benchmark's file cannot: see ``build eval --help``."""

    concurrency_if_unset: int | None = None
    """Concurrency recorded for runs with a null max_concurrency (run without --max-concurrency)."""
    flushed_cache: bool = False
    """The bench_serving runs used ``--flush-cache``, so accept_length covers one run only."""
    allow_incomplete: bool = False
    """Build from a matrix with missing configuration x concurrency cells (each is warned about)."""


@dataclass(frozen=True)
class ServerInfo:
    """What the server said about itself: the speculative method, draft model and target it ran."""

    algorithm: str | None
    """Speculative algorithm (None: the server ran without one)."""
    draft_model: str | None
    model: str | None
    draft_tokens: int | None
    version: str | None

    @property
    def key(self) -> tuple[str | None, str | None, str | None, int | None]:
        return (self.algorithm, self.draft_model, self.model, self.draft_tokens)


@dataclass
class ServingRun:
    """One serving benchmark run read by its source: the cell, and what the record says about the server."""

    cell: Cell
    info: ServerInfo | None
    """The server's own account (None: the record carries none, e.g. bench_serving without /server_info)."""
    speculated: bool | None = None
    """What the record proves without server_info: True when it carries acceptance statistics only a
    speculating server reports (vLLM's spec_decode_*), else None (unknown)."""
    warnings: list[str] = field(default_factory=list)


class Source(ABC):
    """A benchmark tool whose output ``build eval`` reads."""

    tool: ClassVar[str]
    """The tool, as messages name it (e.g. SGLang bench_serving)."""
    engine: ClassVar[str]
    """Engine name recorded when no spec names one."""

    @abstractmethod
    def recognises(self, record: Record) -> bool:
        """True when ``record`` is this tool's output."""

    def served_by(self, record: Record) -> tuple[str, str] | None:
        """The engine the record's content proves served it, with the proof; None: any engine could have.

        A client benchmark can measure any OpenAI-compatible server, so only what the server itself
        wrote into the record (its own status endpoint, its own metrics) names the engine.
        """
        return None


class ServingSource(Source):
    """A tool that writes one summary record per serving run (a configuration at one concurrency)."""

    @abstractmethod
    def read(self, record: Record, configuration: str, options: ServingOptions) -> ServingRun:
        """The run as a cell of ``configuration``; one-line ``FormatError`` for what the card needs and lacks."""

    def server(self, record: Record) -> ServerInfo | None:
        """The server's own account of what it ran, when the record carries one."""
        return None

    def speculated(self, record: Record) -> bool | None:
        """True when the record itself proves the server speculated (acceptance counters), else None."""
        return None

    def sent(self, record: Record) -> int | None:
        """Requests sent (failed ones included), when the record says; None: unknown."""
        return None

    def default_name(self, record: Record) -> tuple[str, str] | None:
        """(file stem, run name) when the tool names its output files itself: such a stem is the tool's
        words (backend, rate, model, date), not the user's, so only its run name part names the run."""
        return None

    def model(self, record: Record) -> str | None:
        """The served model the record names (the target), when it names one."""
        info = self.server(record)
        return info.model if info is not None else None


def concurrency(record: Record, options: ServingOptions) -> int:
    """``max_concurrency``, or ``--concurrency-if-unset`` for a run that had none (refused without it)."""
    if record.data.get("max_concurrency") is None and "max_concurrency" in record.data:
        if options.concurrency_if_unset is None:
            raise record.error(
                "null: the run had no --max-concurrency; pass --concurrency-if-unset N to record it as N",
                "max_concurrency",
            )
        return options.concurrency_if_unset
    return record.integer("max_concurrency", minimum=1)


def percentiles(record: Record, metric: str) -> Percentiles | None:
    """``{mean,median,p99}_<metric>_ms`` as the tool reported them (absent keys stay null)."""
    values = {
        stat: record.number(f"{stat}_{metric}_ms", minimum=0)
        for stat in ("mean", "median", "p99")
        if record.data.get(f"{stat}_{metric}_ms") is not None
    }
    return Percentiles(**values) if values else None


def failures_of(record: Record, completed: int) -> tuple[int | None, list[str]]:
    """Requests marked failed in the per-request ``errors`` array, and a warning when they cannot be counted.

    Without the array (bench_serving without --output-details) the count is unknown, not zero: the
    requests that failed are simply absent from every figure, so the build says so.
    """
    errors = record.data.get("errors")
    where = f"{record.path}:{record.line}"
    if errors is None:
        return None, [
            f"{where}: failed requests cannot be counted (no per-request errors; bench_serving needs "
            f"--output-details): {completed} completed, failures recorded as unknown"
        ]
    if not isinstance(errors, list):
        raise record.error(
            f"expected a list with one value per request, got {type(errors).__name__}", "errors"
        )
    failed = sum(1 for error in errors if error)
    if completed + failed != len(errors):
        raise record.error(
            f"{completed} completed and {failed} failed requests, but {len(errors)} requests listed",
            "completed",
        )
    warnings = []
    if failed:
        first = next(str(e) for e in errors if e)
        warnings.append(
            f"{where}: {failed} request{'s' if failed > 1 else ''} failed and "
            f"{'are' if failed > 1 else 'is'} left out of every figure (first error: {first[:120]})"
        )
    return failed, warnings


def summary_cell(
    record: Record,
    configuration: str,
    options: ServingOptions,
    *,
    accepted: float | None,
    per_run: bool | None,
    failed: int | None,
    server_info: bool,
    e2e: str = "e2e_latency",
) -> Cell:
    """The cell of a serving tool's summary record: its own throughput, TTFT, TPOT and percentiles.

    Both tools define TPOT per request as (latency - ttft) / (output_len - 1) and report the median;
    per-user tok/s is 1000 / median_tpot_ms. ``e2e`` is the tool's key for end-to-end latency.
    """
    duration = record.number("duration")
    if duration <= 0:
        raise record.error(f"zero-duration run ({duration:g} s)", "duration")
    completed = record.integer("completed")
    if completed < 1:
        raise record.error("no completed requests", "completed")
    output_tokens = record.integer("total_output_tokens", minimum=0)
    overall = (
        record.number("output_throughput", minimum=0)
        if record.data.get("output_throughput") is not None
        else output_tokens / duration
    )
    median_tpot = record.number("median_tpot_ms")
    if median_tpot <= 0:
        raise record.error("median TPOT is zero (no request produced more than one token)", "median_tpot_ms")
    if not all(math.isfinite(value) for value in (overall, 1000.0 / median_tpot)):
        raise record.error("throughput is not a finite number", "median_tpot_ms")
    keys = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2e_latency": e2e}
    summaries = {name: percentiles(record, key) for name, key in keys.items()}
    return Cell(
        configuration=configuration,
        concurrency=concurrency(record, options),
        overall_tok_s=overall,
        per_user_tok_s=1000.0 / median_tpot,
        median_ttft_ms=record.number("median_ttft_ms", minimum=0),
        median_tpot_ms=median_tpot,
        accepted_length=accepted,
        accepted_length_per_run=None if accepted is None else per_run,
        failed_requests=failed,
        server_info=server_info,
        request_count=completed,
        duration_s=duration,
        total_output_tokens=output_tokens,
        latency_ms=LatencySummary(**summaries) if any(summaries.values()) else None,
    )
