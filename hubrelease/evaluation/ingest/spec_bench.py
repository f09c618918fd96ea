"""ik_llama.cpp ``llama-spec-bench --output-format jsonl`` -> one ``BenchAttempt`` per attempt row.

The tool (examples/spec-bench/spec-bench.cpp at ik_llama.cpp 8337e4c) writes one ``row_type: attempt``
line per task and repeat, then one ``row_type: summary`` line (lines 1329-1342). Compact lines
(``spec_bench_compact_attempt_json``, line 997) carry ``task``, ``run`` (from 1), ``ok``, ``generated``,
``decode_s`` and ``stages[]`` of ``drafts``, ``draft_tokens``, ``accepted``, ``drafted_by_position`` and
``accepted_by_position``; with ``--output-details`` (``spec_bench_attempt_json``, line 941) the task is
``task_name`` with its ``task_category``, the repeat ``repeat_index`` (from 0), ``ok`` is under ``quality``,
``generated`` under ``tokens``, ``decode_s`` under ``timing`` and the stages under ``speculative``
(``spec_bench_stage_json``, line 526: ``num_drafts``, ``draft_tokens``, ``accepted_tokens`` and the
same position arrays). Element 0 of a position array is draft position 1 (the tool's README). Decode tok/s is
``generated / decode_s`` and acceptance length ``1 + accepted / drafts``, as the tool computes them
(lines 948 and 937-939). The summary line only re-adds the attempts, so it is recognised and not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hubrelease.evaluation.ingest.interface import Source
from hubrelease.evaluation.records import Record


@dataclass(frozen=True)
class BenchAttempt:
    """One llama-spec-bench attempt: a task run once, single stream."""

    record: Record
    task: str
    repeat: int
    category: str | None
    ok: bool
    generated: int
    decode_s: float
    stage: str | None
    """The speculative stage type (dflash, draft, mtp...); None: the baseline (no stage)."""
    drafts: int
    draft_tokens: int
    accepted: int
    drafted_by_position: tuple[int, ...]
    accepted_by_position: tuple[int, ...]

    @property
    def tok_s(self) -> float:
        return self.generated / self.decode_s


def _counts(record: Record, stage: dict[str, Any], key: str, index: int) -> tuple[int, ...]:
    values = stage.get(key, [])
    where = f"stages[{index}].{key}"
    if not isinstance(values, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values
    ):
        raise record.error("expected a list of non-negative integers", where)
    return tuple(values)


def parse_attempt(record: Record) -> BenchAttempt | None:
    """An attempt row, compact or detailed; None for the summary row."""
    data = record.data
    if data.get("row_type") == "summary":
        return None
    detailed = "task_name" in data
    speculative = data.get("speculative") if detailed else data
    stages = speculative.get("stages", []) if isinstance(speculative, dict) else None
    if not isinstance(stages, list) or not all(isinstance(s, dict) for s in stages):
        raise record.error("expected a list of stage objects", "stages")
    if len(stages) > 1:
        raise record.error(
            f"{len(stages)} speculative stages (a composite chain): per-position acceptance is read "
            "for one stage only; bench each stage on its own",
            "stages",
        )
    flat = Record(
        record.path,
        record.line,
        {
            **data,
            **(data.get("timing") or {} if detailed else {}),
            **({"generated": (data.get("tokens") or {}).get("generated")} if detailed else {}),
            **({"ok": (data.get("quality") or {}).get("ok")} if detailed else {}),
        },
    )
    stage = stages[0] if stages else {}
    names = ("num_drafts", "accepted_tokens") if detailed else ("drafts", "accepted")
    numbers = {"drafts": 0, "draft_tokens": 0, "accepted": 0}
    for field, key in zip(numbers, (names[0], "draft_tokens", names[1]), strict=True):
        value = stage.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise record.error(f"expected a non-negative integer, got {value!r}", f"stages[0].{key}")
        numbers[field] = value
    ok = flat.data.get("ok")
    if not isinstance(ok, bool):
        raise record.error(f"expected true or false, got {ok!r}", "ok")
    repeat = flat.integer("repeat_index", minimum=0) + 1 if detailed else flat.integer("run", minimum=1)
    category = data.get("task_category") if detailed else None
    attempt = BenchAttempt(
        record=record,
        task=flat.text("task_name" if detailed else "task"),
        repeat=repeat,
        category=str(category) if category not in (None, "") else None,
        ok=ok,
        generated=flat.integer("generated", minimum=0),
        decode_s=flat.number("decode_s", minimum=0),
        stage=str(stage["type"]) if stage.get("type") not in (None, "", "none") else None,
        drafted_by_position=_counts(record, stage, "drafted_by_position", 0),
        accepted_by_position=_counts(record, stage, "accepted_by_position", 0),
        **numbers,
    )
    if attempt.ok and (attempt.decode_s <= 0 or attempt.generated < 1):
        raise record.error(
            f"{attempt.generated} tokens in {attempt.decode_s:g} s is not a decode speed", "decode_s"
        )
    if any(a > d for a, d in zip(attempt.accepted_by_position, attempt.drafted_by_position, strict=False)):
        raise record.error(
            "a position accepted more tokens than it drafted", "stages[0].accepted_by_position"
        )
    return attempt


class SpecBench(Source):
    """``llama-spec-bench --output-format jsonl`` lines (compact or ``--output-details``)."""

    tool = "llama-spec-bench"
    engine = "ik_llama.cpp"

    def recognises(self, record: Record) -> bool:
        """Every line the tool writes carries ``row_type`` (spec-bench.cpp lines 951, 980, 1009, 1013)."""
        return record.data.get("row_type") in ("attempt", "summary")
