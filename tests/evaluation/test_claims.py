"""Derived claims of both seed cards, computed from the committed evaluation JSON."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hubrelease.errors import InputError
from hubrelease.evaluation import Evaluation, load_evaluation
from hubrelease.evaluation.claims import cell_gain, comparison_gain

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"


@pytest.fixture(scope="module")
def spark() -> Evaluation:
    return load_evaluation(MANIFESTS / "ornith-1.5-dflash2" / "spark-evaluation.json")


@pytest.fixture(scope="module")
def gguf() -> Evaluation:
    return load_evaluation(MANIFESTS / "ornith-1.0-dflash-gguf" / "evaluation.json")


def test_seed_000_44_percent_above_target_only_serving(spark: Evaluation) -> None:
    gain = cell_gain(spark, "dflash2", "autoregressive", 1)
    assert (gain.treatment, gain.baseline) == (114.2, 79.3)
    assert f"{gain.relative_change:.1%}" == "44.0%"


def test_per_user_metric_can_be_chosen(spark: Evaluation) -> None:
    gain = cell_gain(spark, "dflash2", "autoregressive", 8, metric="per_user_tok_s")
    assert gain.relative_change == pytest.approx(37.2 / 31.8 - 1)


def test_seed_001_37_percent_increase_uses_the_paired_difference(gguf: Evaluation) -> None:
    gain = comparison_gain(gguf, "spec-on-off")
    assert (gain.treatment, gain.baseline) == (25.65, 18.71)
    assert f"{gain.relative_change:.1%}" == "37.0%"
    # The ratio of the two rounded means would claim 37.1%: the card's number is the paired one.
    assert f"{gain.treatment / gain.baseline - 1:.1%}" == "37.1%"


def test_seed_001_primary_endpoint_is_about_six_percent(gguf: Evaluation) -> None:
    assert f"{comparison_gain(gguf, 'retrain-ab').relative_change:.1%}" == "6.1%"
    assert comparison_gain(gguf, "retrain-ab", setting=4).treatment == 22.95


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda e: cell_gain(e, "dflash2", "autoregressive", 2),
            "cells: no cell for configuration 'dflash2' at concurrency 2",
        ),
        (lambda e: comparison_gain(e, "nope"), "comparisons: no comparison 'nope'"),
    ],
)
def test_missing_data_is_an_input_error(
    spark: Evaluation, call: Callable[[Evaluation], object], message: str
) -> None:
    with pytest.raises(InputError) as info:
        call(spark)
    assert str(info.value) == message


def test_a_gain_over_a_zero_baseline_is_one_error(spark: Evaluation) -> None:
    cells = [
        c.model_copy(update={"overall_tok_s": 0.0}) if c.configuration == "autoregressive" else c
        for c in spark.cells
    ]
    stalled = spark.model_copy(update={"cells": cells})
    with pytest.raises(InputError) as info:
        cell_gain(stalled, "dflash2", "autoregressive", 1)
    assert str(info.value) == (
        "cells: configuration 'autoregressive' has overall_tok_s 0 at concurrency 1: no relative gain over it"
    )
