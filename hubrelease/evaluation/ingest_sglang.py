"""SGLang ``bench_serving`` JSONL (one line per run) -> matrix cells keyed on configuration x max_concurrency.

With ``--output-details`` a line carries per-request ``output_lens``, ``ttfts`` and ``itls`` (seconds);
then TTFT, TPOT and per-user tok/s are recomputed per request and their medians taken. Per-user tok/s
is the median of (output_len - 1) / (latency - ttft), which equals 1000 / median TPOT only for odd
counts, so it is never derived from SGLang's summary median. Without the arrays the summary medians are
used and per-user tok/s falls back to 1000 / median_tpot_ms.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from hubrelease.evaluation.models import Cell
from hubrelease.evaluation.records import Record


def _requests(record: Record, key: str) -> list[Any] | None:
    """A per-request array, or None when the line does not carry it."""
    value = record.data.get(key)
    if value is not None and not isinstance(value, list):
        raise record.error(f"expected a list with one value per request, got {type(value).__name__}", key)
    return value


def _seconds(record: Record, key: str, index: int, value: Any) -> float:
    """One request's time: a finite number of seconds, not negative."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise record.error(f"request {index}: expected a finite time >= 0 s, got {value!r}", key)
    return float(value)


def _per_request(record: Record) -> tuple[list[float], list[float], list[float]] | None:
    """(ttft ms, tpot ms, per-user tok/s) per successful request, or None without per-request arrays.

    As in bench_serving, TTFT counts every successful request; TPOT and decode speed only those
    with more than one output token.
    """
    lens, ttfts, itls, latencies = (
        _requests(record, key) for key in ("output_lens", "ttfts", "itls", "latencies")
    )
    if lens is None or ttfts is None or (latencies is None and itls is None):
        return None
    errors = _requests(record, "errors") or [""] * len(lens)
    timing = latencies if latencies is not None else itls
    columns: list[list[Any]] = [lens, ttfts, timing or [], errors]
    if len({len(column) for column in columns}) != 1:
        raise record.error("per-request arrays differ in length", "output_lens")
    ttft_ms, tpot_ms, user_tok_s = [], [], []
    for index, (length, ttft, latency_or_itl, error) in enumerate(zip(*columns, strict=True)):
        if error:
            continue
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise record.error(f"request {index}: expected a token count, got {length!r}", "output_lens")
        ttft_s = _seconds(record, "ttfts", index, ttft)
        ttft_ms.append(ttft_s * 1000.0)
        if length <= 1:
            continue
        if latencies is not None:
            decode_s = _seconds(record, "latencies", index, latency_or_itl) - ttft_s
        elif isinstance(latency_or_itl, list):
            decode_s = sum(_seconds(record, "itls", index, itl) for itl in latency_or_itl)
        else:
            raise record.error(f"request {index}: expected a list of inter-token times", "itls")
        if decode_s <= 0:
            raise record.error(f"request {index} has zero decode time", "itls")
        tpot_ms.append(decode_s * 1000.0 / (length - 1))
        user_tok_s.append((length - 1) / decode_s)
    if not user_tok_s:
        raise record.error("no request produced more than one token", "output_lens")
    return ttft_ms, tpot_ms, user_tok_s


def sglang_cell(record: Record, configuration: str) -> Cell:
    """One bench_serving run as a cell of ``configuration``."""
    concurrency = record.integer("max_concurrency", minimum=1)
    duration = record.number("duration")
    if duration <= 0:
        raise record.error(f"zero-duration run ({duration:g} s)", "duration")
    output_tokens = record.integer("total_output_tokens", minimum=0)
    completed = record.integer("completed")
    if completed < 1:
        raise record.error("no completed requests", "completed")
    accept = record.data.get("accept_length")
    accepted_length = record.number("accept_length") if accept is not None else None
    if accepted_length is not None and accepted_length <= 0:
        # bench_serving reports -1 (or 0) when the server has no speculative state.
        accepted_length = None
    per_request = _per_request(record)
    if per_request is None:
        median_ttft = record.number("median_ttft_ms", minimum=0)
        median_tpot = record.number("median_tpot_ms")
        if median_tpot <= 0:
            raise record.error("median TPOT is zero", "median_tpot_ms")
        per_user = 1000.0 / median_tpot
    else:
        median_ttft, median_tpot, per_user = (statistics.median(values) for values in per_request)
    return Cell(
        configuration=configuration,
        concurrency=concurrency,
        overall_tok_s=output_tokens / duration,
        per_user_tok_s=per_user,
        median_ttft_ms=median_ttft,
        median_tpot_ms=median_tpot,
        accepted_length=accepted_length,
        request_count=completed,
        duration_s=duration,
        total_output_tokens=output_tokens,
    )


def sglang_cells(runs: Sequence[tuple[str | None, Record]], known: Sequence[str]) -> list[Cell]:
    """Cells of every run, in table order; a run's configuration is its override (CONFIG=PATH) or its ``tag``."""
    first_seen: dict[tuple[str, int], Record] = {}
    cells = []
    for override, record in runs:
        name = override or record.data.get("tag")
        if not name:
            raise record.error("run has no tag; pass the file as CONFIG=PATH", "tag")
        if str(name) not in known:
            raise record.error(f"configuration {name!r} is not in the spec ({', '.join(known)})", "tag")
        cell = sglang_cell(record, str(name))
        key = (cell.configuration, cell.concurrency)
        if key in first_seen:
            earlier = first_seen[key]
            raise record.error(
                f"second run of {key[0]!r} at concurrency {key[1]} (first at {earlier.path}:{earlier.line})",
                "max_concurrency",
            )
        first_seen[key] = record
        cells.append(cell)
    # Table order: configurations as the spec lists them, then rising concurrency.
    return sorted(cells, key=lambda c: (known.index(c.configuration), c.concurrency))
