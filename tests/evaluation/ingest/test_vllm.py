"""``vllm bench serve`` result files (vLLM 0.33.0's format) are recognised and ingested as vLLM's."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from hubrelease.builders.evaluation import Source, build_evaluation
from hubrelease.errors import FormatError
from hubrelease.evaluation.infer import SpecOptions
from hubrelease.evaluation.ingest import source_of
from hubrelease.evaluation.ingest.vllm import VERSION, VllmBenchServe
from hubrelease.evaluation.records import read_records
from tests.factories.bench_runs import (
    eval_spec,
    sglang_line,
    vllm_result,
    write_json,
    write_jsonl,
    write_spec,
)
from tests.factories.cli import run_cli

OPTIONS = SpecOptions(hardware="NVIDIA H200")


def test_the_format_followed_is_vllm_0_33_0() -> None:
    assert VERSION == "0.33.0"


@pytest.mark.parametrize("detailed", [False, True])
def test_a_result_file_is_vllms_with_its_acceptance_length_prompts_model_and_percentiles(
    tmp_path: Path, detailed: bool
) -> None:
    data = vllm_result(save_detailed=detailed)
    path = write_json(tmp_path / "dflash2.json", data)
    (record,) = read_records(path)
    assert isinstance(source_of(record), VllmBenchServe)
    evaluation = build_evaluation([Source(path)], spec_options=OPTIONS)
    assert evaluation.run.engine.name == "vllm"
    assert evaluation.run.target.repo_id == "acme/target"  # model_id
    assert evaluation.run.prompt_set.total == 4  # num_prompts: failed requests included
    (configuration,) = evaluation.configurations
    assert configuration.method == "speculative"  # it reported acceptance counters; not which method
    (cell,) = evaluation.cells
    assert cell.accepted_length == pytest.approx(1 + 560 / 200)  # 1 + accepted / drafts, bonus included
    assert cell.accepted_length_per_run is True  # counters read before and after the run
    assert (cell.failed_requests, cell.request_count, cell.concurrency) == (1, 3, 4)
    tpots = [1.0 / 100, 2.5 / 200, 2.0 / 300]
    assert cell.median_tpot_ms == pytest.approx(1000 * statistics.median(tpots))
    assert cell.per_user_tok_s == pytest.approx(1 / statistics.median(tpots))
    assert cell.overall_tok_s == pytest.approx(603 / 10.0)
    assert cell.latency_ms is not None and cell.latency_ms.ttft is not None
    assert cell.latency_ms.ttft.p99 == pytest.approx(300.0)
    assert cell.server_info is False
    assert any("1 request failed" in w for w in evaluation.provenance.warnings)


def test_a_vllm_run_without_speculation_counters_has_an_unknown_method(tmp_path: Path) -> None:
    path = write_json(tmp_path / "run.json", vllm_result(spec_decode=None))
    evaluation = build_evaluation([Source(path)], spec_options=OPTIONS)
    assert evaluation.configurations[0].method == "unknown"
    assert evaluation.cells[0].accepted_length is None
    assert any("method unknown for run" in w for w in evaluation.provenance.warnings)


def test_a_vllm_speculative_run_named_autoregressive_is_refused(tmp_path: Path) -> None:
    path = write_json(tmp_path / "run.json", vllm_result())
    code, _, err = run_cli(
        "build", "eval", f"autoregressive={path}", "--hardware", "X", "--out", tmp_path / "e.json"
    )
    assert code == 2
    assert (
        f"{path}:1: server_info: the run reported speculative-decoding acceptance statistics, but configuration "
        "'autoregressive' is named 'autoregressive', which says autoregressive" in err
    )
    spec = eval_spec()
    spec["run"]["engine"] = {"name": "vllm"}
    write_spec(tmp_path / "spec.json", spec)
    code, _, err = run_cli(
        "build",
        "eval",
        f"dflash2={path}",
        f"autoregressive={path}",
        "--spec",
        tmp_path / "spec.json",
        "--out",
        tmp_path / "e.json",
    )
    assert code == 2 and "but configuration 'autoregressive' is autoregressive" in err


@pytest.mark.parametrize("key", ["median_tpot_ms", "median_ttft_ms", "failed", "output_throughput"])
def test_a_figure_the_card_needs_is_refused_with_one_line_when_absent(tmp_path: Path, key: str) -> None:
    data = vllm_result()
    del data[key]
    path = write_json(tmp_path / "run.json", data)
    with pytest.raises(FormatError) as info:
        build_evaluation([Source(path)], spec_options=OPTIONS)
    assert str(info.value).startswith(
        f"{path}:1: {key}: absent from the vllm bench serve result; the card needs it"
    )
    code, _, err = run_cli("build", "eval", path, "--hardware", "X", "--out", tmp_path / "e.json")
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_detailed_errors_must_agree_with_the_failed_count(tmp_path: Path) -> None:
    data = vllm_result(save_detailed=True)
    data["failed"] = 0
    path = write_json(tmp_path / "run.json", data)
    with pytest.raises(FormatError, match="failed is 0, but the errors array lists 1"):
        build_evaluation([Source(path)], spec_options=OPTIONS)


def test_vllm_and_bench_serving_files_are_told_apart_in_one_build(tmp_path: Path) -> None:
    vllm = write_json(tmp_path / "vllm.json", vllm_result(max_concurrency=1))
    sglang = write_jsonl(tmp_path / "sglang.jsonl", [sglang_line(max_concurrency=1)])
    (v,) = read_records(vllm)
    (s,) = read_records(sglang)
    assert (source_of(v).engine, source_of(s).engine) == ("vllm", "sglang")


def test_a_result_under_vllms_default_file_name_is_speculative_by_its_counters(tmp_path: Path) -> None:
    # serve.py:1626 names it {label or backend}-{rate}qps-concurrency{N}-{model}-{date}.json; the model
    # "acme/target" puts the word "target" in it, which named the run autoregressive before.
    name = "openai-infqps-concurrency4-target-20260809-101500"
    one = write_json(tmp_path / f"{name}.json", vllm_result())
    two = write_json(
        tmp_path / f"{name.replace('concurrency4', 'concurrency8')}.json", vllm_result(max_concurrency=8)
    )
    evaluation = build_evaluation([Source(one), Source(two)], spec_options=OPTIONS)
    (configuration,) = evaluation.configurations  # both concurrencies are one run, named by the backend
    assert (configuration.id, configuration.method) == ("openai", "speculative")
    assert [cell.concurrency for cell in evaluation.cells] == [4, 8]


def test_the_label_of_a_default_file_name_still_names_the_run(tmp_path: Path) -> None:
    data = vllm_result(label="autoregressive")
    path = write_json(tmp_path / "autoregressive-infqps-concurrency4-target-20260809-101500.json", data)
    code, _, err = run_cli("build", "eval", path, "--hardware", "X", "--out", tmp_path / "e.json")
    assert code == 2
    assert "configuration 'autoregressive' is named 'autoregressive', which says autoregressive" in err
    renamed = write_json(tmp_path / "renamed.json", data)
    assert build_evaluation([Source(renamed)], spec_options=OPTIONS).configurations[0].id == "renamed"
