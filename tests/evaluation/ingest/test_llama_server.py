"""llama-server rows -> paired A/B, boot spread, sweeps; refusals name file:line."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest
import scipy.stats

from hubrelease.builders.evaluation import Source, build_evaluation, llama_options
from hubrelease.errors import BuildError, FormatError, InputError
from hubrelease.evaluation.analysis import compare_arms, sweep
from hubrelease.evaluation.ingest.llama_server import (
    Columns,
    MeasuredRequest,
    RowDefaults,
    check_unique,
    number_repetitions,
    parse_run,
)
from hubrelease.evaluation.models import Evaluation
from hubrelease.evaluation.records import read_records
from hubrelease.evaluation.spec import ComparisonSpec, SweepSpec, load_spec
from hubrelease.evaluation.stats import paired_t_interval
from tests.factories.bench_runs import (
    LLAMA_FIELDS,
    SEED_001_FIELDS,
    ab_spec_parts,
    eval_spec,
    llama_rows,
    seed_001_ab_rows,
    seed_001_sweep_rows,
    write_csv,
    write_jsonl,
    write_spec,
)

AB = ComparisonSpec.model_validate(ab_spec_parts()["comparisons"][0])
SWEEP = SweepSpec.model_validate(ab_spec_parts()["sweeps"][0])


def _requests(path: Path) -> list[MeasuredRequest]:
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
    assert row.ci95.low == pytest.approx(expected.low) and row.ci95.high == pytest.approx(expected.high)
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


SEED_001 = Path(__file__).parents[1] / "fixtures" / "seed001"
SEED_001_MANIFEST = (
    Path(__file__).resolve().parents[3] / "manifests" / "ornith-1.0-dflash-gguf" / "hubrelease.yaml"
)


def _build_seed_001(*files: str, comparisons: bool = True, **options: Any) -> Evaluation:
    spec = load_spec(SEED_001 / "spec.yaml")
    return build_evaluation(
        [Source(SEED_001 / name) for name in files],
        spec if comparisons else spec.model_copy(update={"comparisons": []}),
        llama_options=llama_options(
            **{"columns": None, "allow_incomplete": False, "manifest": None, **options}
        ),
    )


def test_the_committed_seed_001_fixtures_are_the_factorys() -> None:
    for name, rows in (
        ("results-retrain-ab-20260809.csv", seed_001_ab_rows()),
        ("results-m1q4-20260809.csv", seed_001_sweep_rows()),
    ):
        assert [dict(r.data) for r in read_records(SEED_001 / name)] == [
            {key: str(value) for key, value in row.items()} for row in rows
        ]


def test_seed_001_layout_reproduces_the_published_ab_table_with_no_renaming() -> None:
    evaluation = _build_seed_001(
        "results-retrain-ab-20260809.csv", "results-m1q4-20260809.csv", manifest=SEED_001_MANIFEST
    )
    ab = evaluation.comparison("retrain-ab")
    assert ab is not None
    table = {
        row.setting: (
            f"{row.baseline_mean:.2f}",
            f"{row.treatment_mean:.2f}",
            f"{row.mean_difference:+.3f}",
            f"{row.sd_difference:.3f}",
            f"[{row.ci95.low:.3f}, {row.ci95.high:.3f}]",
        )
        for row in ab.rows
    }
    assert table == {  # seed 001, Measurement 1
        0: ("18.03", "18.06", "+0.039", "0.072", "[-0.021, 0.099]"),
        2: ("20.75", "21.46", "+0.714", "0.892", "[-0.032, 1.460]"),
        3: ("21.63", "22.94", "+1.315", "1.142", "[0.360, 2.270]"),
        4: ("21.26", "22.95", "+1.686", "1.549", "[0.391, 2.981]"),
    }
    assert ab.primary is not None and ab.primary.relative_ci95 is not None
    assert (f"{ab.primary.relative_ci95.low:.1%}", f"{ab.primary.relative_ci95.high:.1%}") == (
        "1.7%",
        "10.5%",
    )
    spread = {(s.arm, s.setting): round(s.last_minus_first, 3) for s in ab.between_boot_spread}
    assert (spread["A", 3], spread["B", 3]) == (-0.093, 0.403)
    (sweep_result,) = evaluation.sweeps
    published = {0: (18.71, 0.23), 1: (21.26, 0.46), 3: (25.65, 1.61), 15: (18.72, 3.50)}
    got = {row.setting: (round(row.mean_tok_s, 2), round(row.sd_tok_s, 2)) for row in sweep_result.rows}
    assert {k: got[k] for k in published} == published


def test_step_time_fit_matches_scipy_over_the_stated_range() -> None:
    (sweep_result,) = _build_seed_001("results-m1q4-20260809.csv", comparisons=False).sweeps
    fit = sweep_result.step_time_fit
    assert fit is not None
    rows = [r for r in sweep_result.rows if r.step_time_ms is not None and r.tokens_per_round is not None]
    inside = [r for r in rows if 1 <= float(r.setting) <= 12]
    reference = scipy.stats.linregress(
        [float(r.setting) - 1 for r in inside], [r.step_time_ms for r in inside]
    )
    assert (fit.setting_min, fit.setting_max, fit.points) == (1, 12, 7)
    assert fit.intercept_ms == pytest.approx(reference.intercept, rel=1e-12)
    assert fit.slope_ms == pytest.approx(reference.slope, rel=1e-12)
    assert [(r.setting, r.in_range) for r in fit.residuals] == [(r.setting, r.setting != 15) for r in rows]
    for residual, row in zip(fit.residuals, rows, strict=True):
        assert row.step_time_ms is not None
        expected = row.step_time_ms - (reference.intercept + reference.slope * (float(row.setting) - 1))
        assert residual.residual_ms == pytest.approx(expected, abs=1e-9)
    # step time is predicted_ms / (predicted_n - accepted), pooled over the setting's runs
    runs = [r for r in read_records(SEED_001 / "results-m1q4-20260809.csv") if r.data["n_max"] == "3"]
    pooled = sum(float(r.data["predicted_ms"]) for r in runs) / sum(
        int(r.data["predicted_n"]) - int(r.data["draft_n_accepted"]) for r in runs
    )
    assert next(r.step_time_ms for r in rows if r.setting == 3) == pytest.approx(pooled)


def test_a_sweep_without_two_speculating_settings_has_no_fit(tmp_path: Path) -> None:
    rows = llama_rows(arms={"S": [1]}, n_max_values=(0, 3))
    result, _ = sweep(_requests(write_csv(tmp_path / "s.csv", rows)), SWEEP)
    assert result.step_time_fit is None


def _completion(prompt: str, n_max: int, predicted_ms: float) -> dict[str, Any]:
    """A raw llama-server /completion response (tools/server/server-task.cpp: timings nested)."""
    timings: dict[str, Any] = {
        "prompt_n": 12,
        "prompt_ms": 40.0,
        "predicted_n": 64,
        "predicted_ms": predicted_ms,
    }
    if n_max:
        timings.update(draft_n=48, draft_n_accepted=32)
    return {
        "content": "def f(): ...",
        "prompt": prompt,
        "generation_settings": {"speculative.n_max": n_max, "temperature": 0.0},
        "tokens_predicted": 64,
        "timings": timings,
    }


def test_raw_completion_responses_pair_by_prompt_with_arm_and_boot_from_the_files(tmp_path: Path) -> None:
    prompts = ["Write a sort.", "Reverse a list.", "Explain SQL joins."]
    for arm, boots in (("A", (1, 2)), ("B", (1, 2))):
        for boot in boots:
            lines = [
                _completion(p, n, 1000.0 + 10 * i + (0 if arm == "A" else -100) + boot)
                for n in (0, 3)
                for i, p in enumerate(prompts)
                for _ in range(2)
            ]
            write_jsonl(tmp_path / f"{arm}-boot{boot}.jsonl", lines)
    sources = [
        Source.parse(f"{arm}={tmp_path / f'{arm}-boot{boot}.jsonl'}") for arm in "AB" for boot in (1, 2)
    ]
    comparisons = ab_spec_parts()["comparisons"]
    comparisons[0]["design"]["prompts"] = 3  # the spec's count must be the rows' (analysis.derive_design)
    spec = load_spec(
        write_spec(tmp_path / "spec.json", eval_spec(run=ab_spec_parts()["run"], comparisons=comparisons))
    )
    evaluation = build_evaluation(sources, spec)
    (ab,) = evaluation.comparisons
    row = next(r for r in ab.rows if r.setting == 3)
    assert row.n == 3 and row.positive_pairs == 3
    speeds_a = [64_000 / (1000.0 + 10 * i + 1.5) for i in range(3)]  # boots 1 and 2 averaged
    assert row.baseline_mean == pytest.approx(statistics.fmean(speeds_a), rel=1e-3)
    assert next(s.boot_means for s in ab.between_boot_spread if s.arm == "A" and s.setting == 3).keys() == {
        "1",
        "2",
    }


def test_columns_option_maps_a_layout_no_alias_covers(tmp_path: Path) -> None:
    rows = [
        {"task": r["prompt_id"], **{k: v for k, v in r.items() if k != "prompt_id"}}
        for r in llama_rows(arms={"A": [1]}, n_max_values=(3,))
    ]
    path = write_csv(tmp_path / "rows.csv", rows, fields=["task", *LLAMA_FIELDS[1:]])
    assert _error(path).endswith("prompt_id: required field is missing")
    parsed = [parse_run(r, Columns.parse("prompt_id=task")) for r in read_records(path)]
    assert {run.prompt for run in parsed} == {"p1", "p2", "p3", "p4"}
    with pytest.raises(InputError) as info:
        Columns.parse("prompt=task")
    assert str(info.value).startswith(
        "--columns: expected FIELD=COLUMN with FIELD one of prompt_id, arm, boot"
    )


def _seed_rows_changed(tmp_path: Path, index: int, **change: Any) -> Path:
    rows = seed_001_ab_rows()
    rows[index].update(change)
    return write_csv(tmp_path / "ab.csv", rows, SEED_001_FIELDS)


@pytest.mark.parametrize(
    ("index", "change", "manifest", "message"),
    [
        (
            70,
            {"drafter_sha16": "7b9f2654dfc07c0a"},
            False,
            "ab.csv:72: drafter_sha16: arm 'B' ran drafter 7b9f2654dfc07c0a, but 186b73dce2046b07 at ab.csv:66",
        ),
        (
            3,
            {"drafter_sha16": "0123456789abcdef"},
            True,
            "ab.csv:5: drafter_sha16: arm 'A' ran drafter 0123456789abcdef, but 7b9f2654dfc07c0a at ab.csv:2",
        ),
        (
            5,
            {"server_sha16": "0123456789abcdef"},
            True,
            "ab.csv:7: server_sha16: server digest 0123456789abcdef is not one of the manifest's engine binaries",
        ),
        (
            5,
            {"server_sha16": "xyz"},
            False,
            "ab.csv:7: server_sha16: expected a hex sha256 or a prefix of one (8 to 64 characters), got 'xyz'",
        ),
    ],
)
def test_sha_columns_are_checked(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    index: int,
    change: dict[str, Any],
    manifest: bool,
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    path = _seed_rows_changed(Path("."), index, **change)
    options = llama_options(None, False, SEED_001_MANIFEST if manifest else None)
    with pytest.raises(FormatError) as info:
        build_evaluation(
            [Source(Path("ab.csv"))],
            load_spec(SEED_001 / "spec.yaml").model_copy(update={"sweeps": []}),
            llama_options=options,
        )
    assert str(info.value) == message
    assert path.exists()


def test_a_drafter_digest_not_in_the_manifest_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    rows = seed_001_ab_rows()
    for row in rows:
        if row["arm"] == "B":
            row["drafter_sha16"] = "0123456789abcdef"
    write_csv(Path("ab.csv"), rows, SEED_001_FIELDS)
    spec = load_spec(SEED_001 / "spec.yaml").model_copy(update={"sweeps": []})
    with pytest.raises(FormatError) as info:
        build_evaluation(
            [Source(Path("ab.csv"))], spec, llama_options=llama_options(None, False, SEED_001_MANIFEST)
        )
    assert str(info.value) == (
        "ab.csv:66: drafter_sha16: drafter digest 0123456789abcdef is not the manifest's digest of Ornith-DFLASH-m1-f16.gguf"
    )


def test_an_incomplete_grid_is_refused_naming_the_missing_runs(tmp_path: Path) -> None:
    rows = seed_001_ab_rows()
    del rows[100]  # arm B, boot 2
    path = write_csv(tmp_path / "ab.csv", rows, SEED_001_FIELDS)
    spec = load_spec(SEED_001 / "spec.yaml").model_copy(update={"sweeps": []})
    with pytest.raises(FormatError) as info:
        build_evaluation([Source(path)], spec)
    assert str(info.value) == (
        "incomplete grid: 1 run missing (arm B boot 2 n_max 3 prompt p3 repetition 1); "
        "pass --allow-incomplete to build from what is there"
    )
    evaluation = build_evaluation([Source(path)], spec, llama_options=llama_options(None, True, None))
    assert evaluation.provenance.warnings == [
        "incomplete grid: 1 run missing (arm B boot 2 n_max 3 prompt p3 repetition 1)"
    ]


def test_zero_based_repetitions_are_kept_and_absent_ones_numbered(tmp_path: Path) -> None:
    rows = llama_rows(arms={"A": [1]}, n_max_values=(3,))
    for row in rows:
        row["repetition"] -= 1  # 0 and 1, as a 0-based driver writes them
    runs = number_repetitions([parse_run(r) for r in read_records(write_csv(tmp_path / "r.csv", rows))])
    assert sorted({run.repetition for run in runs}) == [0, 1]
    check_unique(runs)
    fields = [f for f in LLAMA_FIELDS if f != "repetition"]
    runs = number_repetitions(
        [parse_run(r) for r in read_records(write_csv(tmp_path / "n.csv", rows, fields))]
    )
    assert [run.repetition for run in runs[:2]] == [1, 2]
    check_unique(runs)


def test_llama_servers_own_speed_must_match_ours(tmp_path: Path) -> None:
    response = _completion("Write a sort.", 3, 800.0)
    response["timings"]["predicted_per_second"] = 64_000 / 800.0
    (record,) = read_records(write_jsonl(tmp_path / "ok.jsonl", [response]))
    assert parse_run(record, defaults=RowDefaults(arm="A", boot=1)).tok_s == 80.0
    response["timings"]["predicted_per_second"] = 90.0
    (record,) = read_records(write_jsonl(tmp_path / "bad.jsonl", [response]))
    with pytest.raises(FormatError) as info:
        parse_run(record, defaults=RowDefaults(arm="A", boot=1))
    assert str(info.value).endswith(
        "bad.jsonl:1: predicted_per_second: 90.0 tok/s disagrees with predicted_n / predicted_ms = 80 tok/s"
    )
