"""llama-spec-bench JSONL (compact and --output-details) -> results per category with per-position acceptance."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from hubrelease.builders.evaluation import Source, build_evaluation, evaluation_json
from hubrelease.errors import FormatError
from hubrelease.evaluation.infer import SpecOptions
from hubrelease.evaluation.ingest.sources import source_of
from hubrelease.evaluation.ingest.spec_bench import SpecBench, parse_attempt
from hubrelease.evaluation.records import Record
from hubrelease.evaluation.spec import EvaluationSpec
from tests.factories.bench_runs import spec_bench_attempt, write_jsonl
from tests.factories.cli import run_cli

OPTIONS = SpecOptions(hardware="Test GPU", target="acme/target")
# Three tasks in two categories, two repeats each, positions drafted/accepted per attempt.
TASKS = {
    "zh-1": ("chinese", 3.0),
    "zh-2": ("chinese", 3.5),
    "en-1": ("english", 2.0),
    "en-2": ("english", 2.2),
}


def _lines(details: bool) -> list[dict[str, object]]:
    lines: list[dict[str, object]] = []
    for index, (task, (category, decode_s)) in enumerate(TASKS.items()):
        for run in (1, 2):
            lines.append(
                spec_bench_attempt(
                    task=task,
                    run=run,
                    category=category,
                    generated=256,
                    decode_s=decode_s + 0.1 * run,
                    drafted_by_position=(100 + index, 80, 50),
                    accepted_by_position=(70 + index, 40 + run, 10),
                    details=details,
                )
            )
    lines.append({"row_type": "summary", "attempts": 8, "successes": 8, "failures": 0})
    return lines


def test_every_spec_bench_line_is_read_by_its_own_source() -> None:
    for line in _lines(details=False) + _lines(details=True):
        assert isinstance(source_of(Record(Path("r.jsonl"), 1, line)), SpecBench)


def test_compact_and_detailed_lines_read_the_same_attempt() -> None:
    compact, detailed = (
        parse_attempt(Record(Path("r.jsonl"), 1, _lines(details)[0])) for details in (False, True)
    )
    assert compact is not None and detailed is not None
    assert (compact.task, compact.repeat, compact.drafts, compact.accepted, compact.stage) == (
        "zh-1",
        1,
        100,
        121,
        "dflash",
    )
    fields = ("task", "repeat", "ok", "generated", "decode_s", "stage", "drafts", "draft_tokens", "accepted")
    assert [getattr(compact, f) for f in fields] == [getattr(detailed, f) for f in fields]
    assert compact.accepted_by_position == detailed.accepted_by_position == (70, 41, 10)
    assert (compact.category, detailed.category) == (None, "chinese")


def _expected(details_lines: list[dict[str, object]], category: str | None) -> dict[str, object]:
    """Per-category figures recomputed with numpy/scipy from the lines as the tool wrote them."""
    attempts = [
        line
        for line in details_lines
        if line["row_type"] == "attempt" and (category is None or line["task_category"] == category)
    ]
    per_task: dict[str, list[float]] = {}
    for line in attempts:
        timing = line["timing"]
        assert isinstance(timing, dict)
        per_task.setdefault(str(line["task_name"]), []).append(timing["decode_tps"])
    means = np.array([np.mean(v) for v in per_task.values()])
    low, high = stats.t.interval(0.95, len(means) - 1, loc=means.mean(), scale=stats.sem(means))
    stages = [line["speculative"]["stages"][0] for line in attempts]  # type: ignore[index]
    drafted = np.sum([s["drafted_by_position"] for s in stages], axis=0)
    accepted = np.sum([s["accepted_by_position"] for s in stages], axis=0)
    return {
        "mean": means.mean(),
        "low": low,
        "high": high,
        "length": 1 + sum(s["accepted_tokens"] for s in stages) / sum(s["num_drafts"] for s in stages),
        "rates": list(accepted / drafted),
    }


@pytest.mark.parametrize("details", [False, True])
def test_results_per_category_equal_an_independent_recomputation(tmp_path: Path, details: bool) -> None:
    path = write_jsonl(tmp_path / "dflash.jsonl", _lines(details))
    # Compact lines carry no category: the spec's map gives each task its category.
    spec = EvaluationSpec(
        prompt_categories={task: c for task, (c, _) in TASKS.items()} if not details else {}
    )
    evaluation = build_evaluation([Source(path)], spec, spec_options=OPTIONS)
    assert evaluation.run.engine.name == "ik_llama.cpp"
    assert evaluation.run.prompt_set.total == 4
    assert [(r.configuration, r.category) for r in evaluation.by_category] == [
        ("dflash", None),
        ("dflash", "chinese"),
        ("dflash", "english"),
    ]
    reference = _lines(details=True)
    for result in evaluation.by_category:
        expected = _expected(reference, result.category)
        assert result.ci95 is not None
        assert result.decode_tok_s == pytest.approx(expected["mean"], rel=1e-12)
        assert (result.ci95.low, result.ci95.high) == pytest.approx(
            (expected["low"], expected["high"]), rel=1e-9
        )
        assert result.accepted_length == pytest.approx(expected["length"], rel=1e-12)
        assert [p.rate for p in result.acceptance_by_position] == pytest.approx(expected["rates"], rel=1e-12)
        assert [p.position for p in result.acceptance_by_position] == [1, 2, 3]
    # The figures go into the file; a build without categories writes no such key (see test_golden).
    assert '"by_category"' in evaluation_json(evaluation)


def test_failed_attempts_are_counted_and_left_out(tmp_path: Path) -> None:
    lines = _lines(details=True)
    lines[0] = spec_bench_attempt(task="zh-1", category="chinese", details=True, ok=False, decode_s=0.0)
    evaluation = build_evaluation([Source(write_jsonl(tmp_path / "d.jsonl", lines))], spec_options=OPTIONS)
    chinese = next(r for r in evaluation.by_category if r.category == "chinese")
    assert (chinese.requests, chinese.failed_requests) == (3, 1)


def test_a_task_without_a_category_among_categorised_ones_is_refused(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", _lines(details=False))
    spec = EvaluationSpec(prompt_categories={"zh-1": "chinese"})
    with pytest.raises(FormatError, match="no category for this task, while others have one"):
        build_evaluation([Source(path)], spec, spec_options=OPTIONS)


def test_a_category_that_contradicts_the_map_is_refused(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", _lines(details=True))
    spec = EvaluationSpec(prompt_categories={"zh-1": "english"})
    with pytest.raises(FormatError, match="category 'chinese', but the spec's prompt_categories maps 'zh-1'"):
        build_evaluation([Source(path)], spec, spec_options=OPTIONS)


def test_a_composite_stage_chain_is_refused_with_the_fix(tmp_path: Path) -> None:
    line = spec_bench_attempt(task="t")
    line["stages"] = [line["stages"][0], line["stages"][0]]
    path = write_jsonl(tmp_path / "d.jsonl", [line])
    with pytest.raises(FormatError, match=r"2 speculative stages .* bench each stage on its own"):
        build_evaluation([Source(path)], spec_options=OPTIONS)


def test_the_baseline_has_no_acceptance(tmp_path: Path) -> None:
    lines = [
        spec_bench_attempt(task=t, stage=None, drafted_by_position=(), accepted_by_position=()) for t in "ab"
    ]
    evaluation = build_evaluation([Source(write_jsonl(tmp_path / "base.jsonl", lines))], spec_options=OPTIONS)
    (result,) = evaluation.by_category
    assert (result.accepted_length, result.acceptance_by_position) == (None, [])
    assert json.loads(evaluation_json(evaluation))["by_category"][0]["decode_tok_s"] == pytest.approx(64.0)


def test_the_same_file_given_twice_is_refused(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "dflash.jsonl", _lines(details=True))
    with pytest.raises(FormatError, match="repeats task 'zh-1' run 1 of 'dflash'"):
        build_evaluation([Source(path), Source(path)], spec_options=OPTIONS)


def test_build_eval_reads_spec_bench_output_from_the_command_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "dflash.jsonl", _lines(details=True))
    out = tmp_path / "evaluation.json"
    code, _, err = run_cli("build", "eval", path, "--hardware", "GPU", "--target", "acme/t", "--out", out)
    assert code == 0, err
    assert "0 cells, 0 comparisons, 0 sweeps, 3 results per prompt category from 1 files" in err
    assert [r["category"] for r in json.loads(out.read_text())["by_category"]] == [None, "chinese", "english"]
