"""A card never shows a figure without the caveat its evaluation records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from hubrelease.builders.evaluation import Source, build_evaluation
from hubrelease.card import render_card
from hubrelease.evaluation.ingest import ServingOptions
from hubrelease.evaluation.spec import load_spec
from tests.factories.bench_runs import eval_spec, sglang_line, sglang_server_info, write_jsonl, write_spec
from tests.factories.cards import write_card_release

DFLASH = sglang_server_info(algorithm="DFLASH", draft="acme/drafter")


def _card(tmp_path: Path, evaluation: dict[str, object]) -> str:
    manifest = write_card_release(tmp_path / "release", evaluations={"eval/matrix.json": evaluation})
    data = yaml.safe_load(manifest.read_text())
    data["card"]["claims"][0]["concurrency"] = 1
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))
    return render_card(manifest)


def _evaluation(
    tmp_path: Path, runs: dict[str, list[dict[str, object]]], **options: object
) -> dict[str, Any]:
    sources = [Source(write_jsonl(tmp_path / f"{name}.jsonl", lines), name) for name, lines in runs.items()]
    spec = load_spec(write_spec(tmp_path / "spec.json", eval_spec()))
    evaluation = build_evaluation(sources, spec, serving_options=ServingOptions(**options))  # type: ignore[arg-type]
    return dict(json.loads(evaluation.model_dump_json()))


def _line(**kwargs: object) -> dict[str, object]:
    return sglang_line(**kwargs)  # type: ignore[arg-type]


def test_failed_requests_and_lifetime_accept_length_are_shown_with_the_table_and_the_claim(
    tmp_path: Path,
) -> None:
    failing = _line(max_concurrency=1, accept_length=4.0, server_info=DFLASH)
    failing["errors"] = ["", "", "HTTP 500"]
    failing["completed"] = 2
    evaluation = _evaluation(
        tmp_path,
        {
            "autoregressive": [_line(max_concurrency=1, server_info=sglang_server_info())],
            "dflash2": [failing],
        },
    )
    card = _card(tmp_path, evaluation)
    assert "- DFlash2 at concurrency 1: 1 of 3 requests failed and are left out of every figure." in card
    assert (
        "- Accepted length of every run is the server's lifetime average (warmup and earlier runs included), "
        "not the run's own." in card
    )
    claim = next(line for line in card.splitlines() if line.startswith("- On Test GPU"))
    assert "1 of 3 requests failed" in claim and "lifetime average" in claim
    assert "- Recorded by the build: " in card and "1 request failed" in card


def test_uncounted_failures_and_a_missing_server_info_are_shown(tmp_path: Path) -> None:
    evaluation = _evaluation(
        tmp_path,
        {
            "autoregressive": [_line(max_concurrency=1, details=False, server_info=None)],
            "dflash2": [_line(max_concurrency=1, server_info=DFLASH)],
        },
    )
    stated = _card(tmp_path / "stated", evaluation)
    assert (
        "- Autoregressive: the server did not report what it ran, so the method (autoregressive) is as stated, "
        "not checked against the server." in stated
    )
    evaluation["configurations"][0]["method"] = "unknown"
    card = _card(tmp_path, evaluation)
    assert (
        "- Failed requests were not counted for Autoregressive at concurrency 1 (unknown, not zero)." in card
    )
    assert "- Autoregressive: the server did not report what it ran; decoding method unknown." in card


def test_an_incomplete_matrix_built_with_allow_incomplete_says_what_was_not_measured(tmp_path: Path) -> None:
    evaluation = _evaluation(
        tmp_path,
        {
            "autoregressive": [_line(max_concurrency=c, server_info=sglang_server_info()) for c in (1, 4)],
            "dflash2": [_line(max_concurrency=1, server_info=DFLASH)],
        },
        allow_incomplete=True,
    )
    card = _card(tmp_path, evaluation)
    assert "- Not measured: dflash2 at concurrency 4." in card
    assert "(built with --allow-incomplete)" in card


def test_a_p_value_below_the_printed_precision_is_not_zero(tmp_path: Path) -> None:
    from hubrelease.card.filters import p_value

    assert (p_value(0.00001), p_value(0.0139), p_value(None)) == ("p < 0.0001", "p = 0.0139", "n/a")
