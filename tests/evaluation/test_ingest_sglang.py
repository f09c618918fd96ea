"""bench_serving lines -> cells: per-request medians, fallbacks, and refusals with file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubrelease.errors import FormatError
from hubrelease.evaluation.ingest_sglang import sglang_cell, sglang_cells
from hubrelease.evaluation.records import Record
from tests.factories.bench_runs import sglang_line


def _record(data: dict[str, object], line: int = 1) -> Record:
    return Record(Path("runs.jsonl"), line, data)


def test_per_user_speed_is_the_median_over_requests_not_1000_over_median_tpot() -> None:
    line = sglang_line(
        output_lens=(101, 201, 301, 151), decode_s=(1.0, 2.5, 2.0, 1.4), ttfts=(0.1, 0.1, 0.3, 0.2)
    )
    cell = sglang_cell(_record(line), "ar")
    # per request: 100, 80, 150, 107.14 tok/s -> median 103.57; TPOTs 10, 12.5, 6.67, 9.33 -> median 9.667 ms
    assert cell.per_user_tok_s == pytest.approx((100 + 750 / 7) / 2)
    assert cell.median_tpot_ms == pytest.approx((10 + 1400 / 150) / 2)
    assert 1000 / cell.median_tpot_ms != pytest.approx(cell.per_user_tok_s)
    assert cell.median_ttft_ms == pytest.approx(150.0)
    assert cell.overall_tok_s == pytest.approx(754 / 10.0)
    assert (cell.request_count, cell.accepted_length) == (4, None)


def test_failed_requests_and_single_token_outputs_are_left_out() -> None:
    line = sglang_line(output_lens=(101, 1, 201), decode_s=(1.0, 0.5, 1.0))
    line["errors"] = ["", "", "timeout"]
    cell = sglang_cell(_record(line), "ar")
    assert cell.per_user_tok_s == pytest.approx(100.0)


def test_median_ttft_counts_single_token_requests_as_bench_serving_does() -> None:
    line = sglang_line(
        output_lens=(101, 1, 201, 1), decode_s=(1.0, 0.5, 1.0, 0.5), ttfts=(0.1, 0.2, 0.3, 0.4)
    )
    cell = sglang_cell(_record(line), "ar")
    assert cell.median_ttft_ms == pytest.approx(250.0)
    assert cell.per_user_tok_s == pytest.approx(150.0)


def test_without_per_request_arrays_summary_medians_are_used() -> None:
    line = sglang_line(details=False, accept_length=3.48)
    line["median_tpot_ms"] = 8.0
    cell = sglang_cell(_record(line), "dflash")
    assert cell.per_user_tok_s == pytest.approx(125.0)
    assert cell.accepted_length == 3.48


def test_accept_length_of_minus_one_means_no_speculation() -> None:
    assert sglang_cell(_record(sglang_line(accept_length=-1)), "ar").accepted_length is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"duration": 0}, "runs.jsonl:7: duration: zero-duration run (0 s)"),
        ({"max_concurrency": None}, "runs.jsonl:7: max_concurrency: required field is missing"),
        ({"total_output_tokens": "many"}, "runs.jsonl:7: total_output_tokens: expected a number, got 'many'"),
        ({"ttfts": [0.1]}, "runs.jsonl:7: output_lens: per-request arrays differ in length"),
        ({"max_concurrency": 0}, "runs.jsonl:7: max_concurrency: expected a number >= 1, got 0"),
        ({"total_output_tokens": -5}, "runs.jsonl:7: total_output_tokens: expected a number >= 0, got -5"),
        ({"max_concurrency": 10**400}, f"runs.jsonl:7: max_concurrency: expected a number, got {10**400!r}"),
        (
            {"output_lens": 3},
            "runs.jsonl:7: output_lens: expected a list with one value per request, got int",
        ),
        (
            {"output_lens": [101, "x", 3]},
            "runs.jsonl:7: output_lens: request 1: expected a token count, got 'x'",
        ),
        (
            {"ttfts": [0.1, None, 0.3]},
            "runs.jsonl:7: ttfts: request 1: expected a finite time >= 0 s, got None",
        ),
        (
            {"ttfts": [0.1, float("nan"), 0.3]},
            "runs.jsonl:7: ttfts: request 1: expected a finite time >= 0 s, got nan",
        ),
        (
            {"itls": [[0.1], "x", [0.1]]},
            "runs.jsonl:7: itls: request 1: expected a list of inter-token times",
        ),
        (
            {"itls": [[0.1], [-1.0], [0.1]]},
            "runs.jsonl:7: itls: request 1: expected a finite time >= 0 s, got -1.0",
        ),
        ({"errors": 0}, "runs.jsonl:7: errors: expected a list with one value per request, got int"),
    ],
)
def test_bad_lines_name_file_line_and_field(change: dict[str, object], message: str) -> None:
    line = sglang_line()
    line.update(change)
    with pytest.raises(FormatError) as info:
        sglang_cell(_record(line, 7), "ar")
    assert str(info.value) == message


def test_cells_are_keyed_on_configuration_and_concurrency() -> None:
    runs = [
        (None, _record(sglang_line(tag="b", max_concurrency=4), 1)),
        ("a", _record(sglang_line(max_concurrency=8), 2)),
        ("a", _record(sglang_line(max_concurrency=1), 3)),
    ]
    cells = sglang_cells(runs, ["a", "b"])
    assert [(c.configuration, c.concurrency) for c in cells] == [("a", 1), ("a", 8), ("b", 4)]


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        ([(None, 1, {})], "runs.jsonl:1: tag: run has no tag; pass the file as CONFIG=PATH"),
        ([(None, 1, {"tag": "zz"})], "runs.jsonl:1: tag: configuration 'zz' is not in the spec (a)"),
        (
            [("a", 1, {}), ("a", 5, {})],
            "runs.jsonl:5: max_concurrency: second run of 'a' at concurrency 1 (first at runs.jsonl:1)",
        ),
    ],
)
def test_cells_refuse_unknown_or_repeated_runs(
    runs: list[tuple[str | None, int, dict[str, object]]], message: str
) -> None:
    records = [(name, _record({**sglang_line(), **extra}, line)) for name, line, extra in runs]
    with pytest.raises(FormatError) as info:
        sglang_cells(records, ["a"])
    assert str(info.value) == message
