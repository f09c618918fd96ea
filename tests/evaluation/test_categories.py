"""Results per prompt category: llama-server rows with a category column, bench_serving arrays with a map."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from hubrelease.builders.evaluation import Source, build_evaluation, evaluation_json
from hubrelease.errors import BuildError, FormatError
from hubrelease.evaluation.infer import SpecOptions
from hubrelease.evaluation.ingest import ServingOptions
from hubrelease.evaluation.spec import EvaluationSpec
from tests.factories.bench_runs import (
    LLAMA_FIELDS,
    ab_rows,
    ab_spec_parts,
    llama_rows,
    sglang_line,
    write_csv,
    write_jsonl,
)

AB = SpecOptions(hardware="GPU", target="acme/t", baseline="A", treatment="B", primary="n_max=3")
THINK = {"p1": "think", "p2": "think", "p3": "no-think", "p4": "no-think"}


def _rows_with_categories() -> list[dict[str, Any]]:
    rows = ab_rows()
    for row in rows:
        row["category"] = THINK[row["prompt_id"]]
        if row["arm"] == "B" and row["category"] == "think":
            row["predicted_ms"] = round(row["predicted_ms"] * (0.8 + 0.01 * int(row["prompt_id"][1:])), 6)
    return rows


def _paired(
    rows: list[dict[str, Any]], sides: tuple[tuple[str, int], tuple[str, int]], prompts: list[str]
) -> tuple[float, float, float]:
    """Mean paired difference treatment - baseline ((arm, n_max) each) and its 95% t-interval,
    recomputed with numpy/scipy: per prompt, repetitions averaged per boot, then the boots."""

    def prompt_mean(arm: str, n_max: int, prompt: str) -> float:
        per_boot: dict[int, list[float]] = {}
        for r in rows:
            if (r["arm"], r["prompt_id"], r["n_max"]) == (arm, prompt, n_max):
                per_boot.setdefault(r["boot"], []).append(1000 * r["predicted_n"] / r["predicted_ms"])
        return float(np.mean([np.mean(v) for v in per_boot.values()]))

    (base_arm, base_n), (treat_arm, treat_n) = sides
    differences = np.array(
        [prompt_mean(treat_arm, treat_n, p) - prompt_mean(base_arm, base_n, p) for p in prompts]
    )
    low, high = stats.t.interval(0.95, len(prompts) - 1, loc=differences.mean(), scale=stats.sem(differences))
    return float(differences.mean()), float(low), float(high)


def test_ab_rows_with_a_category_column_get_paired_rows_per_category(tmp_path: Path) -> None:
    rows = _rows_with_categories()
    path = write_csv(tmp_path / "ab.csv", rows, [*LLAMA_FIELDS, "category"])
    (ab,) = build_evaluation([Source(path)], spec_options=AB).comparisons
    assert [(r.setting, r.category) for r in ab.by_category] == [
        (0, "no-think"),
        (0, "think"),
        (3, "no-think"),
        (3, "think"),
    ]
    for row in ab.by_category:
        prompts = [p for p, c in THINK.items() if c == row.category]
        setting = int(row.setting or 0)
        mean, low, high = _paired(rows, (("A", setting), ("B", setting)), prompts)
        assert (row.mean_difference, row.ci95.low, row.ci95.high) == pytest.approx(
            (mean, low, high), rel=1e-9
        )
        assert row.n == 2 and row.role == "secondary"
    # The overall rows are those of a build without categories.
    plain = write_csv(tmp_path / "plain.csv", rows)
    assert ab.rows == build_evaluation([Source(plain)], spec_options=AB).comparisons[0].rows


def test_a_sweeps_setting_pair_gets_paired_rows_per_category(tmp_path: Path) -> None:
    rows = llama_rows(arms={"S": [1]}, n_max_values=(0, 3), gain={"S": 0.2})
    for row in rows:
        row["category"] = THINK[row["prompt_id"]]
        if row["n_max"] == 3 and row["category"] == "think":
            row["predicted_ms"] = round(row["predicted_ms"] * (0.7 + 0.02 * int(row["prompt_id"][1:])), 6)
    path = write_csv(tmp_path / "sweep.csv", rows, [*LLAMA_FIELDS, "category"])
    parts = ab_spec_parts()
    spec = EvaluationSpec.model_validate({"run": parts["run"], "sweeps": parts["sweeps"]})
    (on_off,) = build_evaluation([Source(path)], spec).comparisons
    assert [r.category for r in on_off.by_category] == ["no-think", "think"]
    for paired in on_off.by_category:
        prompts = [p for p, c in THINK.items() if c == paired.category]
        mean, low, high = _paired(rows, (("S", 0), ("S", 3)), prompts)
        assert (paired.mean_difference, paired.ci95.low, paired.ci95.high) == pytest.approx(
            (mean, low, high), rel=1e-9
        )


def test_the_spec_map_categorises_rows_without_a_column(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ab.csv", _rows_with_categories())
    with_map = build_evaluation([Source(path)], EvaluationSpec(prompt_categories=THINK), spec_options=AB)
    column = write_csv(tmp_path / "col.csv", _rows_with_categories(), [*LLAMA_FIELDS, "category"])
    assert (
        with_map.comparisons[0].by_category
        == build_evaluation([Source(column)], spec_options=AB).comparisons[0].by_category
    )


def test_a_prompt_in_two_categories_is_refused(tmp_path: Path) -> None:
    rows = _rows_with_categories()
    rows[-1]["category"] = "think"
    path = write_csv(tmp_path / "ab.csv", rows, [*LLAMA_FIELDS, "category"])
    with pytest.raises(FormatError, match="prompt 'p4' is in category 'think' here and 'no-think' at"):
        build_evaluation([Source(path)], spec_options=AB)


def test_a_category_of_one_prompt_has_no_paired_interval(tmp_path: Path) -> None:
    rows = _rows_with_categories()
    for row in rows:
        row["category"] = "zh" if row["prompt_id"] == "p1" else "en"
    path = write_csv(tmp_path / "ab.csv", rows, [*LLAMA_FIELDS, "category"])
    with pytest.raises(BuildError, match="category 'zh': a paired interval needs at least 2 prompts, got 1"):
        build_evaluation([Source(path)], spec_options=AB)


def test_without_categories_the_file_has_no_category_keys(tmp_path: Path) -> None:
    evaluation = build_evaluation([Source(write_csv(tmp_path / "ab.csv", ab_rows()))], spec_options=AB)
    assert "category" not in evaluation_json(evaluation)


# bench_serving with --output-details: 6 requests, chinese at indices 0, 2, 4.
LANGUAGE = {"0": "zh", "1": "en", "2": "zh", "3": "en", "4": "zh", "5": "en"}
OUTPUT_LENS = (101, 201, 301, 151, 251, 121)
TTFTS = (0.1, 0.2, 0.3, 0.15, 0.25, 0.12)
DECODE_S = (1.0, 2.5, 2.0, 1.1, 3.0, 0.9)


def test_serving_cells_split_by_the_category_of_each_request_index(tmp_path: Path) -> None:
    line = sglang_line(output_lens=OUTPUT_LENS, ttfts=TTFTS, decode_s=DECODE_S, tag="autoregressive")
    path = write_jsonl(tmp_path / "ar.jsonl", [line])
    spec = EvaluationSpec(
        prompt_categories=LANGUAGE,
        configurations=[{"id": "autoregressive", "label": "AR", "method": "autoregressive"}],
    )
    evaluation = build_evaluation(
        [Source(path)], spec, spec_options=SpecOptions(hardware="GPU", target="acme/t"),
        serving_options=ServingOptions(flushed_cache=True),
    )  # fmt: skip
    assert [(r.configuration, r.concurrency, r.category) for r in evaluation.by_category] == [
        ("autoregressive", 1, "en"),
        ("autoregressive", 1, "zh"),
    ]
    for result in evaluation.by_category:
        mine = [int(i) for i, c in LANGUAGE.items() if c == result.category]
        speeds = np.array([(OUTPUT_LENS[i] - 1) / np.sum(line["itls"][i]) for i in mine])
        low, high = stats.t.interval(0.95, len(speeds) - 1, loc=speeds.mean(), scale=stats.sem(speeds))
        assert result.ci95 is not None
        assert (result.decode_tok_s, result.ci95.low, result.ci95.high) == pytest.approx(
            (speeds.mean(), low, high), rel=1e-9
        )
        assert result.median_ttft_ms == pytest.approx(1000 * np.median([TTFTS[i] for i in mine]))
        assert (result.prompts, result.requests, result.failed_requests) == (3, 3, 0)


def test_a_request_missing_from_the_map_is_refused(tmp_path: Path) -> None:
    line = sglang_line(output_lens=OUTPUT_LENS, ttfts=TTFTS, decode_s=DECODE_S, tag="autoregressive")
    spec = EvaluationSpec(
        prompt_categories={k: v for k, v in LANGUAGE.items() if k != "5"},
        configurations=[{"id": "autoregressive", "label": "AR", "method": "autoregressive"}],
    )
    with pytest.raises(FormatError, match="request 5 has no category in the spec's prompt_categories"):
        build_evaluation(
            [Source(write_jsonl(tmp_path / "ar.jsonl", [line]))], spec,
            spec_options=SpecOptions(hardware="GPU", target="acme/t"),
        )  # fmt: skip


def test_a_run_without_per_request_arrays_cannot_be_split(tmp_path: Path) -> None:
    line = sglang_line(tag="autoregressive", details=False)
    spec = EvaluationSpec(
        prompt_categories={"0": "zh"},
        configurations=[{"id": "autoregressive", "label": "AR", "method": "autoregressive"}],
    )
    with pytest.raises(FormatError, match="expected a list to split the run by prompt category"):
        build_evaluation(
            [Source(write_jsonl(tmp_path / "ar.jsonl", [line]))], spec,
            spec_options=SpecOptions(hardware="GPU", target="acme/t"),
        )  # fmt: skip
