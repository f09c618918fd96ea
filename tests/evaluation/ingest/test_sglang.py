"""bench_serving lines -> cells: the file's own summary figures, server_info checks, refusals with file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubrelease.errors import FormatError
from hubrelease.evaluation.ingest.interface import ServingOptions
from hubrelease.evaluation.ingest.serving import infer_configuration, same_model
from hubrelease.evaluation.models import Configuration, Drafter, Run
from hubrelease.evaluation.records import Record
from tests.factories.bench_runs import eval_spec, read_sglang, sglang_line, sglang_matrix, sglang_server_info

AR = Configuration(id="ar", label="Autoregressive", method="autoregressive")
DF = Configuration(
    id="df", label="DFlash2", method="dflash2", drafter=Drafter(name="DFlash2", repo_id="acme/drafter")
)
RUN = Run.model_validate(eval_spec()["run"])


def _record(data: dict[str, object], line: int = 1) -> Record:
    return Record(Path("runs.jsonl"), line, data)


def test_summary_figures_are_bench_servings_own_and_per_user_is_1000_over_median_tpot() -> None:
    line = sglang_line(
        output_lens=(101, 201, 301, 151), decode_s=(1.0, 2.5, 2.0, 1.4), ttfts=(0.1, 0.1, 0.3, 0.2)
    )
    cell = read_sglang(_record(line), "ar").cell
    # TPOT per request = (latency - ttft) / (n - 1): 10, 12.5, 6.67, 9.33 -> median 9.667 ms,
    # although the ITLs (90% of each decode time) would give 10% less.
    assert cell.median_tpot_ms == line["median_tpot_ms"] == pytest.approx((10 + 1400 / 150) / 2)
    assert cell.per_user_tok_s == pytest.approx(1000 / cell.median_tpot_ms)
    assert cell.median_ttft_ms == pytest.approx(150.0)
    assert cell.overall_tok_s == line["output_throughput"] == pytest.approx(754 / 10.0)
    assert (cell.request_count, cell.accepted_length, cell.failed_requests) == (4, None, 0)
    assert cell.latency_ms is not None and cell.latency_ms.e2e_latency is not None
    assert cell.latency_ms.e2e_latency.median == line["median_e2e_latency_ms"]
    assert cell.latency_ms.itl is not None and cell.latency_ms.itl.p99 == line["p99_itl_ms"]


def test_seed_000_per_user_figure_is_1000_over_the_median_tpot() -> None:
    line = sglang_line()
    line["median_tpot_ms"] = 12.39
    assert round(read_sglang(_record(line), "ar").cell.per_user_tok_s, 1) == 80.7


def test_failed_requests_are_recorded_and_warned_about() -> None:
    line = sglang_line(output_lens=(101, 1, 201), decode_s=(1.0, 0.5, 1.0))
    line["errors"] = ["", "", "Bad Gateway: upstream died"]
    line["completed"] = 2
    result = read_sglang(_record(line, 3), "ar")
    assert result.cell.failed_requests == 1
    assert result.warnings == [
        "runs.jsonl:3: 1 request failed and is left out of every figure (first error: Bad Gateway: upstream died)"
    ]


def test_null_max_concurrency_needs_an_explicit_option() -> None:
    line = sglang_line(max_concurrency=None)
    with pytest.raises(FormatError) as info:
        read_sglang(_record(line, 2), "ar")
    assert str(info.value) == (
        "runs.jsonl:2: max_concurrency: null: the run had no --max-concurrency; "
        "pass --concurrency-if-unset N to record it as N"
    )
    assert read_sglang(_record(line), "ar", ServingOptions(concurrency_if_unset=40)).cell.concurrency == 40


def test_accept_length_of_minus_one_means_no_speculation() -> None:
    assert read_sglang(_record(sglang_line(accept_length=-1)), "ar").cell.accepted_length is None


def test_accept_length_scope_follows_the_flush_option_and_is_warned_about() -> None:
    runs = [(None, _record(sglang_line(tag="df", accept_length=4.02)))]
    cells, warnings = sglang_matrix(runs, [DF])
    assert (cells[0].accepted_length, cells[0].accepted_length_per_run) == (4.02, False)
    assert warnings == [
        "1 run carries no server_info (bench_serving could not read /server_info): their configuration is not "
        "checked against the server",
        "accept_length of 1 run is the server's lifetime average (warmup and earlier runs included) unless "
        "bench_serving ran with --flush-cache; pass --flushed-cache if it did",
    ]
    runs = [(None, _record(sglang_line(tag="df", accept_length=4.02, server_info=SPEC_SERVER)))]
    cells, warnings = sglang_matrix(runs, [DF], options=ServingOptions(flushed_cache=True))
    assert (cells[0].accepted_length_per_run, warnings) == (True, [])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"duration": 0}, "runs.jsonl:7: duration: zero-duration run (0 s)"),
        ({"max_concurrency": 0}, "runs.jsonl:7: max_concurrency: expected a number >= 1, got 0"),
        ({"total_output_tokens": "many"}, "runs.jsonl:7: total_output_tokens: expected a number, got 'many'"),
        ({"total_output_tokens": -5}, "runs.jsonl:7: total_output_tokens: expected a number >= 0, got -5"),
        ({"max_concurrency": 10**400}, f"runs.jsonl:7: max_concurrency: expected a number, got {10**400!r}"),
        ({"median_tpot_ms": None}, "runs.jsonl:7: median_tpot_ms: required field is missing"),
        (
            {"median_tpot_ms": 0.0},
            "runs.jsonl:7: median_tpot_ms: median TPOT is zero (no request produced more than one token)",
        ),
        ({"p99_ttft_ms": -1}, "runs.jsonl:7: p99_ttft_ms: expected a number >= 0, got -1"),
        ({"errors": 0}, "runs.jsonl:7: errors: expected a list with one value per request, got int"),
        (
            {"errors": ["", "", "x"]},
            "runs.jsonl:7: completed: 3 completed and 1 failed requests, but 3 requests listed",
        ),
        ({"server_info": "x"}, "runs.jsonl:7: server_info: expected an object, got str"),
    ],
)
def test_bad_lines_name_file_line_and_field(change: dict[str, object], message: str) -> None:
    line = sglang_line()
    line.update(change)
    with pytest.raises(FormatError) as info:
        sglang_matrix(
            [(None, _record(line, 7))], [Configuration(id="runs", label="r", method="autoregressive")]
        )
    assert str(info.value) == message


def test_cells_are_keyed_on_configuration_and_concurrency() -> None:
    runs = [
        (None, _record(sglang_line(tag="df", max_concurrency=4), 1)),
        ("ar", _record(sglang_line(max_concurrency=8), 2)),
        ("ar", _record(sglang_line(max_concurrency=1), 3)),
    ]
    cells, warnings = sglang_matrix(runs, [AR, DF], options=ServingOptions(allow_incomplete=True))
    assert [(c.configuration, c.concurrency) for c in cells] == [("ar", 1), ("ar", 8), ("df", 4)]
    assert warnings[-1] == (
        "incomplete matrix: 3 cells missing (ar at concurrency 4; df at concurrency 1; df at concurrency 8) "
        "(built with --allow-incomplete)"
    )
    with pytest.raises(FormatError, match=r"^incomplete matrix: 3 cells missing .*; pass --allow-incomplete"):
        sglang_matrix(runs, [AR, DF])


def test_a_run_without_tag_is_named_by_its_file_stem() -> None:
    cells, _ = sglang_matrix(
        [(None, _record(sglang_line()))], [Configuration(id="runs", label="r", method="x")]
    )
    assert cells[0].configuration == "runs"


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        (
            [(None, 1, {"tag": "zz"})],
            "runs.jsonl:1: tag: configuration 'zz' is not in the spec (ar); pass the file as CONFIG=PATH",
        ),
        (
            [("ar", 1, {}), ("ar", 5, {})],
            "runs.jsonl:5: max_concurrency: second run of 'ar' at concurrency 1 (first at runs.jsonl:1)",
        ),
    ],
)
def test_cells_refuse_unknown_or_repeated_runs(
    runs: list[tuple[str | None, int, dict[str, object]]], message: str
) -> None:
    records = [(name, _record({**sglang_line(), **extra}, line)) for name, line, extra in runs]
    with pytest.raises(FormatError) as info:
        sglang_matrix(records, [AR])
    assert str(info.value) == message


SPEC_SERVER = sglang_server_info(algorithm="DFLASH", draft="acme/drafter")


@pytest.mark.parametrize(
    ("name", "info", "message"),
    [
        (
            "ar",
            SPEC_SERVER,
            "runs.jsonl:4: server_info: server ran speculative_algorithm DFLASH, but configuration 'ar' is autoregressive",
        ),
        (
            "df",
            sglang_server_info(),
            "runs.jsonl:4: server_info: server ran speculative_algorithm none, but configuration 'df' is dflash2",
        ),
        (
            "df",
            sglang_server_info(algorithm="DFLASH", draft="acme/other-drafter"),
            "runs.jsonl:4: server_info: server's speculative_draft_model_path 'acme/other-drafter' is not "
            "configuration 'df''s drafter 'acme/drafter'",
        ),
        (
            "df",
            sglang_server_info(algorithm="DFLASH", draft="/models/drafter", draft_tokens=16),
            "runs.jsonl:4: server_info: server's speculative_num_draft_tokens is 16, configuration 'df' states 10",
        ),
    ],
)
def test_server_info_contradicting_the_configuration_is_refused(
    name: str, info: dict[str, object], message: str
) -> None:
    with pytest.raises(FormatError) as error:
        sglang_matrix([(name, _record(sglang_line(server_info=info), 4))], [AR, DF], RUN)
    assert str(error.value) == message


def test_swapped_files_are_caught_by_server_info() -> None:
    ar_server = sglang_server_info(model="acme/target")
    runs = [
        ("ar", _record(sglang_line(server_info=ar_server), 1)),
        ("ar", _record(sglang_line(server_info=SPEC_SERVER, max_concurrency=4), 2)),
    ]
    with pytest.raises(FormatError) as error:
        sglang_matrix(runs, [AR, Configuration(id="x", label="x", method="dflash")])
    assert str(error.value).startswith("runs.jsonl:2: server_info: server ran speculative_algorithm DFLASH")


def test_a_different_server_within_one_configuration_is_refused() -> None:
    runs = [
        ("df", _record(sglang_line(server_info=SPEC_SERVER), 1)),
        (
            "df",
            _record(
                sglang_line(server_info={**SPEC_SERVER, "model_path": "acme/other"}, max_concurrency=4), 2
            ),
        ),
    ]
    with pytest.raises(FormatError) as error:
        sglang_matrix(runs, [DF])
    assert str(error.value) == (
        "runs.jsonl:2: server_info: server differs from the one of 'df' at runs.jsonl:1 "
        "(DFLASH, acme/drafter, target acme/other vs DFLASH, acme/drafter, target acme/target)"
    )


def test_a_target_path_not_naming_the_target_is_a_warning() -> None:
    line = sglang_line(server_info=sglang_server_info(model="/models/llama"))
    _, warnings = sglang_matrix([("ar", _record(line))], [AR], RUN)
    assert warnings == [
        "runs.jsonl:1: server_info.model_path '/models/llama' does not name the target 'acme/target'"
    ]
    line = sglang_line(server_info=sglang_server_info(model="/models/target/"))
    assert sglang_matrix([("ar", _record(line))], [AR], RUN)[1] == []


def test_configurations_are_inferred_from_server_info() -> None:
    inferred = infer_configuration(
        "dflash2", read_sglang(_record(sglang_line(server_info=SPEC_SERVER)), "x").info, None
    )
    assert (inferred.method, inferred.draft_tokens) == ("dflash", 10)
    assert inferred.drafter == Drafter(name="drafter", repo_id="acme/drafter")
    no_spec = read_sglang(_record(sglang_line(server_info=sglang_server_info())), "x").info
    assert infer_configuration("ar", no_spec, None).method == "autoregressive"
    # No server account (bench_serving --backend vllm writes null): unknown, not autoregressive.
    assert infer_configuration("ar", None, None).method == "unknown"
    assert infer_configuration("x", None, True).method == "speculative"  # vLLM's acceptance counters


@pytest.mark.parametrize(
    ("path", "repo_id", "same"),
    [
        ("acme/drafter", "acme/drafter", True),
        ("other/drafter", "acme/drafter", False),
        ("/models/acme/drafter/", "acme/drafter", True),
        ("/models/drafter", "acme/drafter", True),
        ("/models/drafter-v2", "acme/drafter", False),
    ],
)
def test_a_hub_id_must_match_exactly_and_a_local_path_by_name(path: str, repo_id: str, same: bool) -> None:
    assert same_model(path, repo_id) is same
