"""Evaluations cannot mislabel a run, with or without a spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubrelease.builders.evaluation import Source, build_evaluation
from hubrelease.errors import BuildError, FormatError
from hubrelease.evaluation.infer import SpecOptions
from hubrelease.evaluation.ingest import ServingOptions
from hubrelease.evaluation.spec import load_spec
from tests.factories.bench_runs import (
    SEED_001_FIELDS,
    ab_spec_parts,
    eval_spec,
    llama_rows,
    seed_001_ab_rows,
    sglang_line,
    sglang_server_info,
    write_csv,
    write_jsonl,
    write_spec,
)
from tests.factories.cli import run_cli

DFLASH = sglang_server_info(algorithm="DFLASH", draft="acme/drafter")
PLAIN = sglang_server_info()
OPTIONS = SpecOptions(hardware="Test GPU", target="acme/target")


def _files(tmp_path: Path, ar: dict[str, object], df: dict[str, object]) -> tuple[Path, Path]:
    return (
        write_jsonl(
            tmp_path / "ar.jsonl", [{**sglang_line(max_concurrency=c, server_info=ar)} for c in (1, 4)]
        ),
        write_jsonl(
            tmp_path / "df.jsonl", [{**sglang_line(max_concurrency=c, server_info=df)} for c in (1, 4)]
        ),
    )


def test_swapped_files_without_a_spec_are_refused_naming_file_tag_and_server(tmp_path: Path) -> None:
    ar, df = _files(tmp_path, PLAIN, DFLASH)
    # The contents swapped: the file named autoregressive holds the DFlash server's runs.
    code, _, err = run_cli(
        "build",
        "eval",
        f"autoregressive={df}",
        f"dflash2={ar}",
        "--hardware",
        "X",
        "--out",
        tmp_path / "e.json",
    )
    assert code == 2
    assert err.startswith(f"error: {df}:1: server_info: server ran speculative_algorithm DFLASH")
    assert "configuration 'autoregressive' is named 'autoregressive', which says autoregressive" in err
    assert not (tmp_path / "e.json").exists()


def test_a_speculative_run_tagged_autoregressive_is_refused(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "runs.jsonl", [sglang_line(tag="autoregressive", server_info=DFLASH)])
    with pytest.raises(FormatError) as info:
        build_evaluation([Source(path)], spec_options=OPTIONS)
    assert str(info.value) == (
        f"{path}:1: server_info: server ran speculative_algorithm DFLASH, but configuration 'autoregressive' "
        "is named 'autoregressive', which says autoregressive"
    )


def test_a_tag_naming_another_method_family_than_the_server_is_refused(tmp_path: Path) -> None:
    eagle = sglang_server_info(algorithm="EAGLE3", draft="acme/drafter")
    path = write_jsonl(tmp_path / "runs.jsonl", [sglang_line(tag="dflash2", server_info=eagle)])
    with pytest.raises(FormatError, match="is named 'dflash2', which says dflash \\(speculative\\)"):
        build_evaluation([Source(path)], spec_options=OPTIONS)


def test_with_a_spec_the_tag_is_checked_too(tmp_path: Path) -> None:
    """The spec's configuration is speculative and server_info agrees, but the line's tag says autoregressive."""
    path = write_jsonl(tmp_path / "runs.jsonl", [sglang_line(tag="autoregressive", server_info=DFLASH)])
    spec = load_spec(write_spec(tmp_path / "spec.json", eval_spec()))
    with pytest.raises(FormatError) as info:
        build_evaluation([Source(path, "dflash2")], spec)
    assert "configuration 'dflash2' (tag 'autoregressive') is named 'autoregressive'" in str(info.value)


def test_a_run_without_server_info_leaves_the_method_unknown_unless_stated(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "ar.jsonl", [sglang_line(server_info=None)])
    evaluation = build_evaluation([Source(path)], spec_options=OPTIONS)
    assert evaluation.configurations[0].method == "unknown"
    assert evaluation.cells[0].server_info is False
    assert any("method unknown for ar (state it in a --spec)" in w for w in evaluation.provenance.warnings)
    spec = load_spec(write_spec(tmp_path / "spec.json", eval_spec()))
    stated = build_evaluation(
        [Source(path, "autoregressive")], spec, serving_options=ServingOptions(allow_incomplete=True)
    )
    assert stated.configurations[0].method == "autoregressive"


def test_failures_that_cannot_be_counted_are_warned_about_and_recorded_unknown(tmp_path: Path) -> None:
    """Without --output-details bench_serving writes no errors array: 8 sent, 5 recorded, and no way to tell."""
    line = sglang_line(
        output_lens=(101, 201, 301, 151, 99), ttfts=(0.1,) * 5, decode_s=(1.0,) * 5, details=False
    )
    path = write_jsonl(tmp_path / "ar.jsonl", [line])
    evaluation = build_evaluation([Source(path)], spec_options=OPTIONS)
    (cell,) = evaluation.cells
    assert cell.failed_requests is None and cell.request_count == 5
    assert evaluation.run.prompt_set.total is None  # not the 5 completed: the prompts sent are unknown
    assert any(
        "failed requests cannot be counted (no per-request errors; bench_serving needs --output-details): "
        "5 completed, failures recorded as unknown" in w
        for w in evaluation.provenance.warnings
    )


def test_a_bench_serving_grid_with_a_hole_is_refused_unless_allowed(tmp_path: Path) -> None:
    ar = write_jsonl(
        tmp_path / "ar.jsonl", [sglang_line(max_concurrency=c, server_info=PLAIN) for c in (1, 4)]
    )
    df = write_jsonl(tmp_path / "df.jsonl", [sglang_line(max_concurrency=1, server_info=DFLASH)])
    args = (
        "build",
        "eval",
        f"autoregressive={ar}",
        f"dflash2={df}",
        "--hardware",
        "X",
        "--out",
        tmp_path / "e.json",
    )
    code, _, err = run_cli(*args)
    assert code == 2
    assert "incomplete matrix: 1 cell missing (dflash2 at concurrency 4); pass --allow-incomplete" in err
    code, _, err = run_cli(*args, "--allow-incomplete")
    assert code == 0
    assert (
        "incomplete matrix: 1 cell missing (dflash2 at concurrency 4) (built with --allow-incomplete)" in err
    )


@pytest.mark.parametrize("first", [0, 1])
def test_design_counts_come_from_the_rows_zero_or_one_based(tmp_path: Path, first: int) -> None:
    rows = llama_rows(arms={"A": [1, 4], "B": [2, 3]}, repetitions=2)
    for row in rows:
        row["repetition"] = row["repetition"] - 1 + first
    path = write_csv(tmp_path / "ab.csv", rows)
    evaluation = build_evaluation(
        [Source(path)], spec_options=SpecOptions(hardware="X", target="acme/t", baseline="A", treatment="B")
    )
    design = evaluation.comparisons[0].design
    assert design is not None
    assert (design.prompts, design.repetitions, design.predicted_tokens, design.boot_order) == (
        4,
        2,
        256,
        ["A", "B", "B", "A"],
    )


def test_a_spec_stating_other_counts_than_the_rows_is_refused(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ab.csv", llama_rows(arms={"A": [1], "B": [2]}, repetitions=2))
    comparison = {
        "id": "ab", "title": "AB", "baseline": "A", "treatment": "B",
        "arms": [{"id": "A", "label": "A"}, {"id": "B", "label": "B"}],
        "design": {"repetitions": 3},
    }  # fmt: skip
    spec = load_spec(
        write_spec(tmp_path / "spec.json", eval_spec(run=ab_spec_parts()["run"], comparisons=[comparison]))
    )
    with pytest.raises(BuildError, match=r"design\.repetitions is 3 in the spec, but the rows hold 2"):
        build_evaluation([Source(path)], spec)


def test_inferred_arms_keep_the_rows_drafter_file_and_sha16_and_the_server_digests(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ab.csv", seed_001_ab_rows(), SEED_001_FIELDS)
    options = SpecOptions(hardware="GB10", target="org/t", baseline="A", treatment="B", primary="n_max=3")
    evaluation = build_evaluation([Source(path)], spec_options=options)
    arms = {arm.id: arm.drafter for arm in evaluation.comparisons[0].arms}
    assert arms["A"] is not None and arms["B"] is not None
    assert (arms["A"].file, arms["A"].sha256_prefix) == (
        "bench/Ornith-DFLASH-rt-f16-rope1e7.gguf",
        "7b9f2654dfc07c0a",
    )
    assert (arms["B"].file, arms["B"].sha256_prefix) == ("Ornith-DFLASH-m1-f16.gguf", "186b73dce2046b07")
    assert evaluation.run.engine.binaries == ["7b7ff16cd5726490"]
