"""Results per prompt category (language, think mode, task): the same figures, split by the prompts' category.

Acceptance and speed move with the prompt (think mode, language), so one figure over a mixed prompt
set hides what a user of one kind of prompt gets. A category comes from the run itself (a llama-server
row's ``category`` column, llama-spec-bench's ``task_category``) or from the spec's
``prompt_categories`` map. Each category's decode speed is a mean over its prompts (repetitions
averaged first) with a Student-t interval from ``stats``, the same statistics as the paired rows.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence

from hubrelease.errors import FormatError
from hubrelease.evaluation.ingest.interface import ServingOptions, ServingSource, concurrency
from hubrelease.evaluation.ingest.llama_server import MeasuredRequest
from hubrelease.evaluation.ingest.serving import run_name
from hubrelease.evaluation.ingest.spec_bench import BenchAttempt
from hubrelease.evaluation.models import CategoryResult, Interval, PositionAcceptance
from hubrelease.evaluation.records import Record
from hubrelease.evaluation.stats import t_interval


def _category(
    record: Record, own: str | None, key: str, mapping: Mapping[str, str], field: str
) -> str | None:
    """The row's own category, else the map's; the two may not differ."""
    mapped = mapping.get(key)
    if own is not None and mapped is not None and own != mapped:
        raise record.error(
            f"category {own!r}, but the spec's prompt_categories maps {key!r} to {mapped!r}: "
            "correct one of them",
            field,
        )
    return own if own is not None else mapped


def _all_or_none(named: Sequence[tuple[Record, str | None]], what: str) -> None:
    """A category for some prompts and not others would compare a subset with the whole: refused."""
    missing = [record for record, category in named if category is None]
    if missing and len(missing) < len(named):
        first = missing[0]
        raise first.error(
            f"no category for this {what}, while others have one: give every prompt a category "
            "(a category column or the spec's prompt_categories)",
            "category",
        )


def categorise_requests(runs: Sequence[MeasuredRequest], mapping: Mapping[str, str]) -> list[MeasuredRequest]:
    """llama-server rows with their prompt's category; a prompt is in one category only."""
    out = [
        dataclasses.replace(
            run, category=_category(run.record, run.category, run.prompt, mapping, "category")
        )
        for run in runs
    ]
    _all_or_none([(run.record, run.category) for run in out], "row")
    first: dict[str, MeasuredRequest] = {}
    for run in out:
        earlier = first.setdefault(run.prompt, run)
        if earlier.category != run.category:
            raise run.record.error(
                f"prompt {run.prompt!r} is in category {run.category!r} here and {earlier.category!r} at "
                f"{earlier.record.path}:{earlier.record.line}",
                "category",
            )
    return out


def _speed(
    per_prompt: Mapping[str, Sequence[float]],
) -> tuple[float, float, Interval | None]:
    """Mean over prompts of each prompt's mean speed, its sd and t-interval (none with one prompt)."""
    means = [statistics.fmean(values) for values in per_prompt.values()]
    if len(means) < 2:
        return means[0], 0.0, None
    t = t_interval(statistics.fmean(means), statistics.stdev(means), len(means))
    return t.mean, t.sd, Interval(low=t.low, high=t.high)


def _list(record: Record, key: str, length: int | None = None) -> list[object]:
    values = record.data.get(key)
    if not isinstance(values, list) or (length is not None and len(values) != length):
        size = f" with {length} values (one per request)" if length is not None else ""
        raise record.error(f"expected a list{size} to split the run by prompt category", key)
    return values


def serving_by_category(
    runs: Sequence[tuple[ServingSource, str | None, Record]],
    mapping: Mapping[str, str],
    options: ServingOptions,
) -> list[CategoryResult]:
    """Each serving run split by the category of its request indices, from its per-request arrays.

    Index i is the i-th prompt of the dataset: bench_serving (sglang 0.5.23 benchmark/serving.py) sends
    the requests in dataset order (lines 1118-1120; a trace replay sorts them by timestamp first,
    line 1103), gathers the outputs in that order (line 1619) and writes each array from them (lines
    1946-1951).

    A request's decode speed is (output tokens - 1) / the sum of its inter-token gaps: the streamed
    chunks from the first to the last token. bench_serving keeps no per-request latency, so this is
    the one per-request speed both serving tools' arrays give; requests with one token have none.
    """
    if not mapping:
        return []
    results = []
    for source, override, record in runs:
        errors = _list(record, "errors")
        count = len(errors)
        output_lens, ttfts, itls = (_list(record, key, count) for key in ("output_lens", "ttfts", "itls"))
        unmapped = [str(i) for i in range(count) if str(i) not in mapping]
        if unmapped:
            raise record.error(
                f"request {unmapped[0]} has no category in the spec's prompt_categories "
                f"({len(unmapped)} of {count} requests unmapped)",
                "errors",
            )
        speeds: dict[str, dict[str, list[float]]] = defaultdict(dict)
        first_token: dict[str, list[float]] = defaultdict(list)
        failed: dict[str, int] = defaultdict(int)
        for index in range(count):
            category = mapping[str(index)]
            if errors[index]:
                failed[category] += 1
                continue
            gaps, tokens, ttft = itls[index], output_lens[index], ttfts[index]
            if not (isinstance(gaps, list) and isinstance(tokens, int) and isinstance(ttft, int | float)):
                raise record.error(f"request {index}: expected numbers and a list of gaps", "itls")
            first_token[category].append(float(ttft))
            if tokens > 1 and sum(gaps) > 0:
                speeds[category][str(index)] = [(tokens - 1) / sum(gaps)]
        name = run_name(source, override, record)
        level = concurrency(record, options)
        for category in sorted(set(mapping[str(i)] for i in range(count))):
            if not speeds[category]:
                raise record.error(f"no request of category {category!r} produced a decode speed", "itls")
            mean, sd, ci = _speed(speeds[category])
            results.append(
                CategoryResult(
                    configuration=name,
                    concurrency=level,
                    category=category,
                    prompts=len(speeds[category]),
                    requests=len(first_token[category]),
                    failed_requests=failed[category],
                    decode_tok_s=mean,
                    sd_decode_tok_s=sd,
                    ci95=ci,
                    median_ttft_ms=1000.0 * statistics.median(first_token[category]),
                )
            )
    return results


def _positions(attempts: Sequence[BenchAttempt]) -> list[PositionAcceptance]:
    """Drafted and accepted counts per position, summed over attempts (rate as the tool defines it)."""
    drafted: dict[int, int] = defaultdict(int)
    accepted: dict[int, int] = defaultdict(int)
    for attempt in attempts:
        for index, count in enumerate(attempt.drafted_by_position):
            drafted[index + 1] += count
        for index, count in enumerate(attempt.accepted_by_position):
            accepted[index + 1] += count
    return [
        PositionAcceptance(
            position=position,
            drafted=drafted[position],
            accepted=accepted[position],
            rate=accepted[position] / drafted[position] if drafted[position] else None,
        )
        for position in sorted(drafted.keys() | accepted.keys())
    ]


def bench_by_category(
    attempts: Sequence[tuple[str, BenchAttempt]], mapping: Mapping[str, str]
) -> list[CategoryResult]:
    """Per run name: every task, then each category's, with acceptance per draft position."""
    first: dict[tuple[str, str, int], BenchAttempt] = {}
    for name, attempt in attempts:
        earlier = first.setdefault((name, attempt.task, attempt.repeat), attempt)
        if earlier is not attempt:
            raise attempt.record.error(
                f"repeats task {attempt.task!r} run {attempt.repeat} of {name!r} "
                f"(first at {earlier.record.path}:{earlier.record.line}); give each run its own NAME=PATH",
                "task",
            )
    named = [
        (name, a, _category(a.record, a.category, a.task, mapping, "task_category")) for name, a in attempts
    ]
    _all_or_none([(a.record, category) for _, a, category in named], "task")
    results = []
    for name in dict.fromkeys(name for name, _ in attempts):
        mine = [(a, category) for n, a, category in named if n == name]
        categories = sorted({c for _, c in mine if c is not None})
        for category in [None, *categories]:
            group = [a for a, c in mine if category is None or c == category]
            done = [a for a in group if a.ok]
            if not done:
                raise FormatError(
                    f"llama-spec-bench run {name!r}: no successful attempt of {category or 'any task'}"
                )
            per_task: dict[str, list[float]] = defaultdict(list)
            for attempt in done:
                per_task[attempt.task].append(attempt.tok_s)
            mean, sd, ci = _speed(per_task)
            drafts = sum(a.drafts for a in done)
            results.append(
                CategoryResult(
                    configuration=name,
                    category=category,
                    prompts=len(per_task),
                    requests=len(done),
                    failed_requests=len(group) - len(done),
                    decode_tok_s=mean,
                    sd_decode_tok_s=sd,
                    ci95=ci,
                    accepted_length=1.0 + sum(a.accepted for a in done) / drafts if drafts else None,
                    acceptance_by_position=_positions(done),
                )
            )
    return results
