"""llama-server rows -> paired A/B, boot spread, sweeps; refusals name file:line."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from hubrelease.errors import BuildError, FormatError
from hubrelease.evaluation.ingest_llama_server import Request, compare_arms, parse_run, sweep
from hubrelease.evaluation.records import read_records
from hubrelease.evaluation.spec import ComparisonSpec, SweepSpec
from hubrelease.evaluation.stats import paired_t_interval
from tests.factories.bench_runs import ab_spec_parts, llama_rows, write_csv, write_jsonl

AB = ComparisonSpec.model_validate(ab_spec_parts()["comparisons"][0])
SWEEP = SweepSpec.model_validate(ab_spec_parts()["sweeps"][0])


def _requests(path: Path) -> list[Request]:
    return [parse_run(record) for record in read_records(path)]


def test_ab_averages_boots_per_prompt_then_pairs(tmp_path: Path) -> None:
    rows = llama_rows(arms={"A": [1, 4], "B": [2, 3]}, n_max_values=(3,), gain={"A": 0.1, "B": 0.2})
    comparison = compare_arms(_requests(write_csv(tmp_path / "ab.csv", rows)), AB)
    (row,) = comparison.rows
    per_prompt: dict[str, dict[str, float]] = {"A": {}, "B": {}}
    for arm in ("A", "B"):
        for prompt in {r["prompt_id"] for r in rows}:
            speeds = [
                256_000 / r["predicted_ms"] for r in rows if r["arm"] == arm and r["prompt_id"] == prompt
            ]
            per_prompt[arm][prompt] = statistics.fmean(speeds)  # equal rows per boot: same as boot-then-mean
    prompts = sorted(per_prompt["A"])
    expected = paired_t_interval([per_prompt["A"][p] for p in prompts], [per_prompt["B"][p] for p in prompts])
    assert (row.n, row.role, row.setting) == (4, "primary", 3)
    assert row.mean_difference == pytest.approx(expected.mean)
    assert (row.ci95.low, row.ci95.high) == (pytest.approx(expected.low), pytest.approx(expected.high))
    assert row.relative_change == pytest.approx(row.mean_difference / row.baseline_mean)
    assert row.ratio == pytest.approx(1.6 / 1.3)
    assert row.positive_pairs == 4
    spread = {s.arm: s for s in comparison.between_boot_spread}
    assert list(spread["A"].boot_means) == ["1", "4"]
    assert spread["A"].last_minus_first == pytest.approx(
        spread["A"].boot_means["4"] - spread["A"].boot_means["1"]
    )
    assert spread["A"].last_minus_first > 0  # the factory adds 0.1 tok/s per boot index


def test_sweep_pools_tokens_per_round_and_pairs_settings(tmp_path: Path) -> None:
    rows = llama_rows(arms={"S": [1]}, n_max_values=(0, 2, 3))
    result, (on_off,) = sweep(_requests(write_jsonl(tmp_path / "sweep.jsonl", rows)), SWEEP)
    by_setting = {row.setting: row for row in result.rows}
    assert by_setting[0].tokens_per_round is None
    assert by_setting[3].tokens_per_round == pytest.approx(256 / (256 // 3))
    assert by_setting[2].runs == 8
    assert by_setting[0].mean_tok_s == pytest.approx(
        statistics.fmean(256_000 / r["predicted_ms"] for r in rows[:8])
    )
    (row,) = on_off.rows
    assert row.ratio == pytest.approx(1.3)
    assert row.per_pair_relative_range is not None
    assert row.per_pair_relative_range.low == pytest.approx(0.3)
    assert on_off.arms[1].label == "n_max=3"


def _error(path: Path) -> str:
    with pytest.raises(FormatError) as info:
        for record in read_records(path):
            parse_run(record)
    return str(info.value)


def test_prompt_in_one_arm_only_names_the_row(tmp_path: Path) -> None:
    rows = llama_rows(arms={"A": [1], "B": [2]}, n_max_values=(3,))
    rows = [r for r in rows if not (r["arm"] == "A" and r["prompt_id"] == "p4")]
    path = write_csv(tmp_path / "ab.csv", rows)
    with pytest.raises(FormatError) as info:
        compare_arms(_requests(path), AB)
    assert (
        str(info.value)
        == f"{path}:14: prompt_id: prompt 'p4' at n_max 3 has rows in arm B only, none in arm A"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"predicted_ms": 0}, "rows.csv:3: predicted_ms: zero-duration run (0 ms)"),
        ({"predicted_n": ""}, "rows.csv:3: predicted_n: required field is missing"),
        ({"boot": "x"}, "rows.csv:3: boot: expected a number, got 'x'"),
        (
            {"draft_n_accepted": 999},
            "rows.csv:3: draft_n_accepted: draft_n_accepted 999 is outside 0..min(draft_n, predicted_n - 1)",
        ),
    ],
)
def test_bad_rows_name_file_line_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: dict[str, object], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    rows = llama_rows(arms={"A": [1]}, n_max_values=(3,))
    rows[1].update(change)
    assert _error(write_csv(Path("rows.csv"), rows)) == message


def test_missing_column_and_malformed_json_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rows = llama_rows(arms={"A": [1]}, n_max_values=(3,))
    assert _error(write_csv(Path("short.csv"), rows, fields=["prompt_id", "arm"])) == (
        "short.csv:2: boot: required field is missing"
    )
    Path("bad.jsonl").write_text('{"prompt_id": "p1"}\n{"prompt_id": \n', encoding="utf-8")
    with pytest.raises(FormatError) as info:
        list(read_records(Path("bad.jsonl")))
    assert str(info.value) == "bad.jsonl:2: malformed JSON line: Expecting value"
    Path("wide.csv").write_text("a,b\n1,2\n1,2,3\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        list(read_records(Path("wide.csv")))
    assert str(info.value) == "wide.csv:3: row has more cells than the header's 2"


def test_one_prompt_is_refused_naming_the_comparison(tmp_path: Path) -> None:
    ab = write_csv(tmp_path / "ab.csv", llama_rows(arms={"A": [1], "B": [2]}, prompts=["p1"]))
    with pytest.raises(BuildError) as info:
        compare_arms(_requests(ab), AB)
    assert (
        str(info.value)
        == "comparison 'retrain-ab' at n_max 0: a paired interval needs at least 2 prompts, got 1"
    )
    on_off = write_csv(tmp_path / "sweep.csv", llama_rows(arms={"S": [1]}, prompts=["p1"]))
    with pytest.raises(BuildError) as info:
        sweep(_requests(on_off), SWEEP)
    assert str(info.value) == "comparison 'spec-on-off': a paired interval needs at least 2 prompts, got 1"
